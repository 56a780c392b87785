import CallEngine

/// Runs the engine's timers in real time. Lives inside the actor that owns the engine: `arm`
/// replaces a timer armed under the same id; when one fires, `fire` is called (hop back onto the
/// owning actor there and feed `.timerFired` to the engine, which ignores stale timers).
public struct TimerTable: Sendable {
    private var tasks: [CallTimer: Task<Void, Never>] = [:]

    public init() {}

    /// Arms `timer` for unix time `atMs`, given the current time `nowMs`.
    public mutating func arm(_ timer: CallTimer, atMs: Int64, nowMs: Int64,
                             fire: @escaping @Sendable (CallTimer) async -> Void) {
        tasks[timer]?.cancel()
        let delayMs = max(0, atMs - nowMs)
        tasks[timer] = Task {
            if delayMs > 0 {
                do { try await Task.sleep(for: .milliseconds(delayMs)) } catch { return }
            }
            guard !Task.isCancelled else { return }
            await fire(timer)
        }
    }

    public mutating func cancel(_ timer: CallTimer) {
        tasks.removeValue(forKey: timer)?.cancel()
    }

    /// Forgets a timer that has fired (so the table does not grow).
    public mutating func fired(_ timer: CallTimer) {
        tasks.removeValue(forKey: timer)
    }

    public mutating func cancelAll() {
        for task in tasks.values { task.cancel() }
        tasks.removeAll()
    }

    public var armedCount: Int { tasks.count }
}
