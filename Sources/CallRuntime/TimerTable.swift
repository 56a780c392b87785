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
        let delayMs = Self.delay(atMs: atMs, nowMs: nowMs)
        tasks[timer] = Task {
            // Sleeps in bounded steps, so no due time (however far: it may come from the wire)
            // overflows a Duration or the clock's instant; the timer still fires at `atMs`.
            var remaining = delayMs
            while remaining > 0 {
                let step = min(remaining, Self.maxSleepStepMs)
                do { try await Task.sleep(for: .milliseconds(step)) } catch { return }
                remaining -= step
            }
            guard !Task.isCancelled else { return }
            await fire(timer)
        }
    }

    /// The longest single sleep: one day.
    static let maxSleepStepMs: Int64 = 86_400_000

    /// Milliseconds from `nowMs` to `atMs`, 0 if past; saturating (never traps, whatever the inputs).
    static func delay(atMs: Int64, nowMs: Int64) -> Int64 {
        let (difference, overflow) = atMs.subtractingReportingOverflow(nowMs)
        if overflow { return atMs > nowMs ? .max : 0 }
        return max(0, difference)
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
