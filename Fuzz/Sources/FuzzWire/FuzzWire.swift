import IPCWire

// libFuzzer target: the wire decoder in every security mode (PROTOCOL.md 2, 2.1, 3, 4, 5).
// Byte 0 picks the mode (plain, pv2.2, pv2.3) and whether the rest is sealed first with the right
// key (so the JSON inside reaches the decoder) or handed over raw (the framing itself). Invariants:
// nothing traps; a refused payload leaves the replay state as it was; an accepted protected payload
// is refused when replayed; whatever decodes re-encodes to something that decodes again.

private let localKey = "0123456789abcdef"

func fuzzWire(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    let mode = SecurityMode.allCases[Int(control % 3)]
    let sealed = control & 0x04 == 0
    guard var opener = try? PayloadOpener(mode: mode, localKey: localKey) else { fatalError("opener") }

    var payload = body
    if sealed, mode != .plain,
       var sealer = try? PayloadSealer(mode: mode, localKey: localKey, from: 2 + UInt32(control >> 3), startSeq: 7) {
        payload = (try? sealer.seal(body)) ?? body
    }
    let before = opener.replayGuard
    do {
        let (message, envelope, header) = try opener.openMessage(payload)
        // Re-encoding what was accepted gives a payload that decodes again.
        let again = Envelope(protocolNumber: message.protocolNumber, pv: envelope.pv, t: envelope.t, data: message.envelopeData)
        do {
            _ = try InboundMessage.decode(payload: again.encoded())
        } catch {
            if case .call(let m) = message, m.problem != nil {
                // A call kept with a problem (bad callType) re-encodes without it: still decodes.
                fatalError("re-encoded call with a problem does not decode: \(error)")
            }
            fatalError("re-encoded message does not decode: \(error)")
        }
        if mode != .plain {
            precondition(header != nil, "a protected payload without its header")
            // The same payload again is a replay.
            var replay = opener
            if (try? replay.openMessage(payload)) != nil { fatalError("a replayed payload was accepted") }
            precondition(replay.replayGuard == opener.replayGuard, "a refused replay changed the replay state")
        }
    } catch {
        precondition(opener.replayGuard == before, "a refused payload changed the replay state")
        _ = error.description
    }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzWire(data, size) }
