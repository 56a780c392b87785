import Synchronization

/// A client's inbound messages and state changes, in the order they happened, waiting for one
/// consumer that drains them only while some wait (DESIGN.md "Scale": no task per idle device).
///
/// The transport pushes; the first push onto an empty inbox that nobody drains calls `wake`
/// (on the pushing thread, no lock held), and the consumer then calls `take()` until it returns
/// nothing: that empty answer also marks the inbox as not drained, so the next push wakes again.
/// So one drain at a time, in order, and no task, stream or buffer while nothing waits. Bounded:
/// past `limit` items waiting, newer ones are dropped (and counted by the transport as
/// `MQTTClientCounters.droppedInbound`). After `finish()` (the client closed) every push is
/// dropped and `take()` returns nothing.
public final class MQTTInbox: Sendable {
    /// What `push` did.
    public enum Outcome: Sendable, Equatable {
        /// Queued; a drain is already running or due.
        case queued
        /// Queued, and `wake` was called: a drain must start.
        case woke
        /// Dropped: `limit` items were waiting, or the inbox is finished.
        case dropped
    }

    private struct State {
        var items: [MQTTInbound] = []
        var draining = false
        var finished = false
    }

    /// Items waiting at most.
    public let limit: Int
    private let wake: @Sendable () -> Void
    private let state = Mutex(State())

    public init(limit: Int, wake: @escaping @Sendable () -> Void) {
        self.limit = max(1, limit)
        self.wake = wake
    }

    /// Queues one item; calls `wake` when a drain must start.
    @discardableResult
    public func push(_ item: MQTTInbound) -> Outcome {
        let outcome = state.withLock { s -> Outcome in
            guard !s.finished, s.items.count < limit else { return .dropped }
            s.items.append(item)
            if s.draining { return .queued }
            s.draining = true
            return .woke
        }
        if outcome == .woke { wake() }
        return outcome
    }

    /// Everything waiting, oldest first. Empty: nothing waits, and the drain is over (the next
    /// `push` calls `wake` again). The storage goes with the items: an idle inbox holds none.
    public func take() -> [MQTTInbound] {
        state.withLock { s in
            guard !s.items.isEmpty else {
                s.draining = false
                return []
            }
            let taken = s.items
            s.items = []
            return taken
        }
    }

    /// Items waiting now.
    public var waiting: Int { state.withLock { $0.items.count } }

    /// The client is closed: what waits is dropped, and so is every later push.
    public func finish() {
        state.withLock { s in
            s.finished = true
            s.items = []
        }
    }
}
