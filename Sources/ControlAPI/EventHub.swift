import Foundation
import IPCWire

/// Fans every call event out to the server-sent-event streams (the console, `curl -N`). Each
/// subscriber gets its own unbounded stream of JSON objects, optionally for one device only.
public final class EventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [UUID: (device: String?, continuation: AsyncStream<JSONValue>.Continuation)] = [:]
    private var finished = false

    public init() {}

    /// Events from now on (of `device` only, when given). Ends when the hub finishes.
    public func subscribe(device: String? = nil) -> AsyncStream<JSONValue> {
        let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = UUID()
        let alreadyFinished = lock.withLock { () -> Bool in
            if finished { return true }
            subscribers[id] = (device, continuation)
            return false
        }
        if alreadyFinished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    private func remove(_ id: UUID) {
        lock.withLock { _ = subscribers.removeValue(forKey: id) }
    }

    public var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Sends `event` (a JSON object with a `device` field, or none for process-wide events).
    public func publish(_ event: JSONValue, device: String?) {
        let targets = lock.withLock { subscribers.values.filter { $0.device == nil || $0.device == device } }
        for t in targets { t.continuation.yield(event) }
    }

    /// Ends every stream (the server is stopping).
    public func finishAll() {
        let all = lock.withLock { () -> [AsyncStream<JSONValue>.Continuation] in
            finished = true
            defer { subscribers.removeAll() }
            return subscribers.values.map(\.continuation)
        }
        for c in all { c.finish() }
    }
}
