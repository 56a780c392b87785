import CallEngine

/// One engine's armed timers on a shared `TimerScheduling` (the per-engine table: arming a timer
/// replaces the one armed under the same id). Lives inside the actor that owns the engine.
public struct ScheduledTimers: Sendable {
    /// Where the scheduler comes from (shared with the engine host's clock; 8 bytes inline).
    private let context: EngineContext
    private var armed: [CallTimer: TimerToken] = [:]

    public var scheduler: any TimerScheduling { context.scheduler }

    public init(scheduler: any TimerScheduling = TimerScheduler.shared) {
        self.context = EngineContext(scheduler: scheduler)
    }

    /// Timers on the scheduler of a context shared with others.
    public init(context: EngineContext) {
        self.context = context
    }

    /// Arms `timer` for unix time `atMs`; `fire` is where the owner hops back onto its actor and
    /// feeds `.timerFired` to the engine (which ignores stale timers).
    public mutating func arm(_ timer: CallTimer, atMs: Int64, nowMs: Int64, fire: @escaping @Sendable (CallTimer) async -> Void) {
        if let old = armed[timer] { scheduler.cancel(old) }
        armed[timer] = scheduler.schedule(atMs: atMs, nowMs: nowMs) { await fire(timer) }
    }

    public mutating func cancel(_ timer: CallTimer) {
        if let token = armed.removeValue(forKey: timer) { scheduler.cancel(token) }
    }

    /// Forgets a timer that has fired.
    public mutating func fired(_ timer: CallTimer) { armed.removeValue(forKey: timer) }

    public mutating func cancelAll() {
        for token in armed.values { scheduler.cancel(token) }
        armed.removeAll()
    }

    public var armedCount: Int { armed.count }
}
