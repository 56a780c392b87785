import CallEngine
import Foundation
import IPCWire
@testable import ControlAPI
import ControlAPISpec

// libFuzzer target: the control API's request bodies, decoded as every request schema of
// openapi.yaml (the generated Codable types the server decodes them with), then the checks the
// handlers add (the answer policy). Invariants: nothing traps; a refusal names what is wrong.

func fuzzControlBody(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    typealias S = Components.Schemas
    func attempt<T: Decodable>(_: T.Type) -> T? {
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch let error as DecodingError {
            precondition(!ControlErrorMiddleware.fromDecoding(error).message.isEmpty)
            return nil
        } catch {
            return nil
        }
    }
    _ = attempt(S.PressRequest.self)
    _ = attempt(S.FaultsRequest.self)
    _ = attempt(S.DropConnectionRequest.self)
    _ = attempt(S.VideoOffer.self)
    _ = attempt(S.FleetDropConnectionRequest.self)
    _ = attempt(S.FleetHeartbeatsRequest.self)
    if let body = attempt(S.AnswerPolicyRequest.self) {
        do {
            let policy = try ControlHandlers.policy(body)
            if case .answerAfter(let ms) = policy { precondition(ms >= 0 && ms <= 3_600_000, "policy delay out of range: \(ms)") }
        } catch {
            precondition(!error.description.isEmpty)
        }
    }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzControlBody(data, size) }
