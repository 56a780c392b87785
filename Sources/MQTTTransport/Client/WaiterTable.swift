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

    /// A dictionary keeps its storage when its last entry is removed: give back the storage of
    /// the empty ones, so an idle client (one of thousands in a fleet) holds none.
    mutating func releaseEmptyStorage() {
        if continuations.isEmpty, continuations.capacity > 0 { continuations = [:] }
        if timeouts.isEmpty, timeouts.capacity > 0 { timeouts = [:] }
        if pubacks.isEmpty, pubacks.capacity > 0 { pubacks = [:] }
        if subacks.isEmpty, subacks.capacity > 0 { subacks = [:] }
        if subscribeMids.isEmpty, subscribeMids.capacity > 0 { subscribeMids = [:] }
    }

    mutating func takeConnected() -> [UInt64] {
        defer { connected = [] }
        return connected
    }

    mutating func takeClosed() -> [UInt64] {
        defer { closed = [] }
        return closed
    }
}
