typealias WaitContinuation = CheckedContinuation<Result<Void, MQTTError>, Never>

/// What a waiter waits for; the text of its timeout is made only if it times out.
enum WaitSubject: Sendable {
    case connection
    case disconnect
    case puback(topic: String)
    case suback(filter: String)

    var description: String {
        switch self {
        case .connection: "connection"
        case .disconnect: "disconnect"
        case .puback(let topic): "PUBACK for \(topic)"
        case .suback(let filter): "SUBACK for \(filter)"
        }
    }
}

/// One suspended wait: resumed by its event, or by the client's loop thread once `deadline`
/// (monotonic seconds) has passed (no task and no sleep per wait: docs/fleet.md "Memory per
/// device").
struct Waiter {
    let continuation: WaitContinuation
    let deadline: Double
    let subject: WaitSubject
}

/// Who waits for what, for one client. Made on the client's first wait and dropped once nothing
/// is left in it (`ClientConnection.releaseWaitersIfEmpty`), so an idle client holds none.
/// Tokens whose waiter timed out stay in the indexes until the event comes. Guarded by the
/// client's mutex.
final class WaiterTable {
    var waiting: [UInt64: Waiter] = [:]
    var connected: [UInt64] = []
    var closed: [UInt64] = []
    var pubacks: [Int32: [UInt64]] = [:]
    var subacks: [String: [UInt64]] = [:]
    var subscribeMids: [Int32: String] = [:]
    private var last: UInt64 = 0

    func nextToken() -> UInt64 {
        last &+= 1
        return last
    }

    /// Nothing waits and no SUBSCRIBE is unanswered.
    var isEmpty: Bool {
        waiting.isEmpty && connected.isEmpty && closed.isEmpty && pubacks.isEmpty && subacks.isEmpty
            && subscribeMids.isEmpty
    }

    /// The earliest deadline of the waiters, if any.
    var earliestDeadline: Double? { waiting.values.lazy.map(\.deadline).min() }

    func takeConnected() -> [UInt64] {
        defer { connected = [] }
        return connected
    }

    func takeClosed() -> [UInt64] {
        defer { closed = [] }
        return closed
    }
}

extension Duration {
    /// Seconds as a `Double`, clamped to 0...1e9 (a deadline never overflows or lies in the past).
    var clampedSeconds: Double {
        let (seconds, attoseconds) = components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return min(max(0, value), 1e9)
    }
}
