/// The seam every engine host arms its timers on (issue 23 "Seams", DESIGN.md "Doorbells, the
/// cloud join, and simulation"): the real `TimerScheduler` (one heap and one thread, real time)
/// in production, a `SimulatedClock` in tests and the simulator (timers fire when it advances).
///
/// Deadlines are unix milliseconds on the host's `EngineClock`; `nowMs` is that clock's reading
/// when the timer is armed, so a scheduler measures the delay, never the absolute time.
public protocol TimerScheduling: AnyObject, Sendable {
    /// Runs `action` at unix time `atMs`, given the time now `nowMs` (any values: the delay
    /// saturates and is clamped to 0...`TimerScheduler.maximumDelayMs`). `action` is where the
    /// owner hops back onto its actor; a simulated scheduler awaits it before the next timer.
    @discardableResult
    func schedule(atMs: Int64, nowMs: Int64, _ action: @escaping @Sendable () async -> Void) -> TimerToken

    /// Forgets a timer; one already running or run is not affected.
    func cancel(_ token: TimerToken)

    /// Timers scheduled and not yet fired or cancelled.
    var pendingCount: Int { get }
}

/// A scheduled timer; pass it to `cancel` of the scheduler that made it.
public struct TimerToken: Hashable, Sendable {
    let id: UInt64

    init(id: UInt64) { self.id = id }
}

/// The delay of a timer due at `atMs` when it is `nowMs`: saturating, clamped to
/// 0...`maximumMs` (a deadline from the wire, `Int64.max` or negative, never traps).
func timerDelayMs(atMs: Int64, nowMs: Int64, maximumMs: Int64) -> Int64 {
    let (difference, overflow) = atMs.subtractingReportingOverflow(nowMs)
    if overflow { return atMs > nowMs ? maximumMs : 0 }
    return min(max(0, difference), maximumMs)
}

extension TimerScheduling {
    /// Runs `action` `delay` after `clock`'s "now" (saturating; a negative delay is none): the
    /// timeouts and delays of the glue (a wait for a reply, a delayed publish, a reconnect) on
    /// the injected seams, so simulated time drives them too.
    @discardableResult
    public func schedule(after delay: Duration, on clock: any EngineClock,
                         _ action: @escaping @Sendable () async -> Void) -> TimerToken {
        let now = clock.nowMs()
        let (at, overflow) = now.addingReportingOverflow(delay.wholeMilliseconds)
        return schedule(atMs: overflow ? (delay > .zero ? .max : .min) : at, nowMs: now, action)
    }
}

extension Duration {
    /// Whole milliseconds, saturating at the Int64 range.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds > 0 ? .max : .min }
        let (sum, overflow2) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflow2 ? (ms > 0 ? .max : .min) : sum
    }
}
