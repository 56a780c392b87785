import Foundation
import Synchronization

/// Every event a device or an app user reported since it started, and the wait helpers' cursor.
///
/// A wait looks at the events after the cursor (so an event that came before the wait started is
/// found, with no race) and, when one matches, moves the cursor past it: consecutive waits see
/// consecutive events, as `expect` does in pexpect.
final class EventHistory<Event: Sendable>: Sendable {
    private struct Waiter {
        var id: UUID
        var match: @Sendable (Event) -> Bool
        var continuation: CheckedContinuation<Event?, Never>
    }

    private struct State {
        var events: [Event] = []
        var cursor = 0
        var waiters: [Waiter] = []
        var finished = false
        /// Waits ended (timeout, cancellation) before they were registered.
        var endedEarly: Set<UUID> = []
    }

    private let state = Mutex(State())

    /// All events so far, oldest first.
    var all: [Event] { state.withLock { $0.events } }

    /// The number of events so far.
    var count: Int { state.withLock { $0.events.count } }

    /// Events after index `from` (at most the last `limit`), for failure messages.
    func recent(from: Int, limit: Int = 20) -> [Event] {
        state.withLock { s in
            let start = max(min(from, s.events.count), s.events.count - limit)
            return Array(s.events[start...])
        }
    }

    /// Where the next wait starts looking.
    var cursor: Int { state.withLock { $0.cursor } }

    func append(_ event: Event) {
        let woken: [(CheckedContinuation<Event?, Never>, Event)] = state.withLock { s in
            s.events.append(event)
            var woken: [(CheckedContinuation<Event?, Never>, Event)] = []
            s.waiters.removeAll { waiter in
                guard waiter.match(event) else { return false }
                woken.append((waiter.continuation, event))
                return true
            }
            if !woken.isEmpty { s.cursor = s.events.count }
            return woken
        }
        for (continuation, event) in woken { continuation.resume(returning: event) }
    }

    /// No more events will come (the device or app stopped): pending waits end with nil.
    func finish() {
        let waiters: [Waiter] = state.withLock { s in
            s.finished = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The first event after the cursor that matches, waiting up to `timeout` for it; nil when
    /// none came in time (or the source finished, or the task was cancelled).
    func next(within timeout: Duration, where match: @escaping @Sendable (Event) -> Bool) async -> Event? {
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.resolve(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                let found: Event?? = state.withLock { s in
                    if s.cursor < s.events.count, let i = s.events[s.cursor...].firstIndex(where: match) {
                        s.cursor = i + 1
                        return .some(s.events[i])
                    }
                    if s.finished || s.endedEarly.remove(id) != nil { return .some(nil) }
                    s.waiters.append(Waiter(id: id, match: match, continuation: continuation))
                    return nil
                }
                if let found { continuation.resume(returning: found) }
            }
        } onCancel: {
            self.resolve(id)
        }
    }

    /// Ends one wait with nil (its timeout passed or its task was cancelled).
    private func resolve(_ id: UUID) {
        let waiter: Waiter? = state.withLock { s in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else {
                s.endedEarly.insert(id)
                return nil
            }
            return s.waiters.remove(at: i)
        }
        waiter?.continuation.resume(returning: nil)
    }
}
