import Foundation

typealias WaitContinuation = CheckedContinuation<Result<Void, MQTTError>, Never>

/// Who waits for what. Tokens whose waiter timed out stay in the indexes until the event comes.
struct WaiterTable {
    var continuations: [UInt64: WaitContinuation] = [:]
    var timeouts: [UInt64: Task<Void, Never>] = [:]
    var connected: [UInt64] = []
    var closed: [UInt64] = []
    var pubacks: [Int32: [UInt64]] = [:]
    var subacks: [String: [UInt64]] = [:]
    var subscribeMids: [Int32: String] = [:]
    private var last: UInt64 = 0

    mutating func nextToken() -> UInt64 {
        last &+= 1
        return last
    }

    mutating func takeConnected() -> [UInt64] {
        defer { connected.removeAll() }
        return connected
    }

    mutating func takeClosed() -> [UInt64] {
        defer { closed.removeAll() }
        return closed
    }
}
