import IPCWire
import TuyaCloud

// libFuzzer target: what the Tuya cloud sends a joining device (PROTOCOL.md 9, issue 21): the
// iotdns answer, an ATOP answer (plain refusal or sealed result) and the activation result in it,
// the protocol 46 token on the direct link (raw, or sealed with the right authkey so the JSON
// inside reaches the decoder), the product schema, and rpc/rsp answers. Byte 0 picks the decoder.
// Invariant: nothing traps; every refusal is a typed error.

private let authkey = "0123456789abcdef0123456789abcdef"

func fuzzCloud(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    switch control % 6 {
    case 0:
        _ = try? IotDNSAnswer.parse(body)
    case 1:
        if let answer = try? ATOPAnswer.decode(body, key: String(authkey.prefix(16)), limit: ATOPRequest.activationAnswerLimit) {
            _ = try? ActivationResult.decode(answer)
            _ = answer.refusal?.advice
        }
    case 2:
        _ = try? ActivationToken.decode(body, authkey: authkey)
    case 3:
        // The JSON inside a well-sealed token reaches the token's own decoder.
        var sealer = try? PayloadSealer(mode: .pv22, localKey: String(authkey.prefix(16)), from: 1, startSeq: 1)
        if let sealed = try? sealer?.seal(body) { _ = try? ActivationToken.decode(sealed, authkey: authkey) }
    case 4:
        _ = try? DPDefinition.parseSchema(String(decoding: body, as: UTF8.self))
    default:
        _ = try? RPCAnswer.decode(body)
    }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzCloud(data, size) }
