import CallEngine
import IPCWire
@testable import ControlAPI

// libFuzzer target: the control API's request bodies (JSON objects read field by field). Every
// reader the routes use is applied to every field; the answer-policy parser too. Invariants:
// nothing traps; a refusal names a field or says what is wrong.

private let fieldNames = ["targets", "callType", "timeout", "policy", "afterSeconds", "heartbeatRepliesSuppressed",
                          "replyDelayMs", "actingBusy", "seconds", "sdp", "candidates", "devId", "user"]

func fuzzControlBody(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let body: RequestBody
    do {
        body = try RequestBody(bytes)
    } catch {
        precondition(!error.description.isEmpty)
        return 0
    }
    _ = try? body.only(fieldNames)
    for key in Array(body.fields.keys) + fieldNames {
        _ = body.has(key)
        _ = try? body.string(key)
        _ = try? body.bool(key)
        _ = try? body.number(key, "a number")
        _ = try? body.integer(key, "an integer")
        _ = try? body.strings(key)
    }
    do {
        let policy = try ControlRoutes.parsePolicy(body)
        if case .answerAfter(let ms) = policy { precondition(ms >= 0 && ms <= 3_600_000, "policy delay out of range: \(ms)") }
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzControlBody(data, size) }
