import Foundation
import Synchronization
import IPCWire

/// Fans every call event out to the server-sent-event streams (the console, `curl -N`), optionally
/// for one device only. Each subscriber has a bounded buffer (`bufferLimit` items): a client that
/// stops reading cannot grow the server's memory. When its buffer is full the subscriber is cut off
/// (its stream delivers what it holds, then ends) and the event it missed is counted in
/// `droppedEvents` (docs/robustness.md).
public final class EventHub: Sendable {
    /// What a subscriber reads: an event (its JSON text, encoded once for every subscriber), or a
    /// keepalive its reader asked for (`Subscription.keepalive`).
    public enum Item: Sendable, Equatable {
        case event([UInt8])
        case keepalive
    }

    /// One reader's stream, and the handle that queues keepalives into its bounded buffer.
    public struct Subscription: Sendable {
        public let items: AsyncStream<Item>
        public let keepalive: Keepalive
    }

    /// Queues a keepalive behind the events already buffered (cut off when the buffer is full, as
    /// for an event: a reader that does not read keepalives does not read events either). Holds
    /// neither the stream nor the hub.
    public struct Keepalive: Sendable {
        fileprivate let id: UUID
        fileprivate weak let hub: EventHub?

        public func send() { hub?.deliver(.keepalive, to: id) }
    }

    /// Items a subscriber may hold unread before it is cut off.
    public let bufferLimit: Int
    private let state = Mutex(State())

    private struct State {
        var subscribers: [UUID: (device: String?, continuation: AsyncStream<Item>.Continuation)] = [:]
        var finished = false
        var dropped = 0
        var cutOff = 0
    }

    public init(bufferLimit: Int = 1024) {
        self.bufferLimit = max(1, bufferLimit)
    }

    /// Events from now on (of `device` only, when given), with keepalives. Ends when the hub
    /// finishes or the reader falls `bufferLimit` items behind.
    public func subscription(device: String? = nil) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        let id = UUID()
        let alreadyFinished = state.withLock { s -> Bool in
            if s.finished { return true }
            s.subscribers[id] = (device, continuation)
            return false
        }
        if alreadyFinished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return Subscription(items: stream, keepalive: Keepalive(id: id, hub: self))
    }

    /// Events from now on (of `device` only, when given), without keepalives.
    public func subscribe(device: String? = nil) -> AsyncStream<JSONValue> {
        let items = subscription(device: device).items
        return AsyncStream { continuation in
            let task = Task {
                for await item in items {
                    if case .event(let json) = item, let e = try? JSONValue.parse(json) { continuation.yield(e) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func remove(_ id: UUID) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    /// Events not delivered because their subscriber's buffer was full (that subscriber was cut off).
    public var droppedEvents: Int { state.withLock { $0.dropped } }
    /// Subscribers cut off for falling `bufferLimit` items behind.
    public var subscribersCutOff: Int { state.withLock { $0.cutOff } }

    /// Sends `event` (openapi.yaml, Event: an object with a `device` field, or none for
    /// process-wide events), encoded as JSON once, and only when someone listens.
    public func publish(_ event: some Encodable, device: String?) {
        let targets = state.withLock { $0.subscribers.filter { $0.value.device == nil || $0.value.device == device } }
        guard !targets.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The event types are plain data: encoding cannot fail short of a bug, and then the event
        // is counted as dropped rather than sent half-made.
        guard let json = try? encoder.encode(event) else {
            state.withLock { $0.dropped += 1 }
            return
        }
        let item = Item.event(Array(json))
        for (id, t) in targets { offer(item, to: id, t.continuation) }
    }

    fileprivate func deliver(_ item: Item, to id: UUID) {
        guard let c = state.withLock({ $0.subscribers[id]?.continuation }) else { return }
        offer(item, to: id, c)
    }

    private func offer(_ item: Item, to id: UUID, _ c: AsyncStream<Item>.Continuation) {
        guard case .dropped = c.yield(item) else { return }
        let wasSubscribed = state.withLock { s -> Bool in
            if case .event = item { s.dropped += 1 }
            guard s.subscribers.removeValue(forKey: id) != nil else { return false }
            s.cutOff += 1
            return true
        }
        if wasSubscribed { c.finish() }
    }

    /// Ends every stream (the server is stopping).
    public func finishAll() {
        let all = state.withLock { s -> [AsyncStream<Item>.Continuation] in
            s.finished = true
            defer { s.subscribers.removeAll() }
            return s.subscribers.values.map(\.continuation)
        }
        for c in all { c.finish() }
    }
}
