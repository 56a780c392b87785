import HeapModule
import Synchronization

/// Simulated time (issue 23 "Seams"): an `EngineClock` that stands still and the `TimerScheduling`
/// that goes with it. Nothing fires on its own; `advance(byMs:)` moves time forward and runs every
/// timer due on the way, in deadline order (ties in the order they were scheduled), with "now"
/// reading each timer's deadline while it runs, and awaits each timer's action (its hop onto an
/// actor) before the next. A timer that an action arms and that falls due inside the window runs
/// in the same advance. Hours of timers take no real time, and the same steps give the same order.
///
/// One driver advances it (a test or the simulator); scheduling and cancelling are safe from
/// anywhere.
public final class SimulatedClock: EngineClock, TimerScheduling, Sendable {
    private struct Entry: Comparable, Sendable {
        var deadline: Int64
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    private struct State: Sendable {
        var now: Int64
        var heap = Heap<Entry>()
        var actions: [UInt64: @Sendable () async -> Void] = [:]
        var nextId: UInt64 = 1
        var fired = 0
    }

    private let state: Mutex<State>

    /// A fixed start by default (2023-11-14 22:13:20 UTC), so a run does not depend on the day.
    public init(nowMs: Int64 = 1_700_000_000_000) {
        state = Mutex(State(now: nowMs))
    }

    // MARK: EngineClock

    public func nowMs() -> Int64 { state.withLock { $0.now } }

    // MARK: TimerScheduling

    @discardableResult
    public func schedule(atMs: Int64, nowMs: Int64, _ action: @escaping @Sendable () async -> Void) -> TimerToken {
        let delay = timerDelayMs(atMs: atMs, nowMs: nowMs, maximumMs: TimerScheduler.maximumDelayMs)
        return state.withLock { state in
            let id = state.nextId
            state.nextId &+= 1
            let (deadline, overflow) = state.now.addingReportingOverflow(delay)
            state.actions[id] = action
            state.heap.insert(Entry(deadline: overflow ? .max : deadline, id: id))
            return TimerToken(id: id)
        }
    }

    public func cancel(_ token: TimerToken) {
        state.withLock { _ = $0.actions.removeValue(forKey: token.id) }
    }

    public var pendingCount: Int { state.withLock { $0.actions.count } }

    // MARK: Driving time

    /// The deadline of the earliest pending timer (nil: none).
    public var nextDeadlineMs: Int64? {
        state.withLock { state in
            while let first = state.heap.min, state.actions[first.id] == nil { _ = state.heap.removeMin() }
            return state.heap.min?.deadline
        }
    }

    /// Timers fired since the clock was made.
    public var firedCount: Int { state.withLock { $0.fired } }

    /// Moves time forward by `ms` (a negative step moves nothing), running each timer due on the
    /// way as described above. Returns how many fired.
    @discardableResult
    public func advance(byMs ms: Int64) async -> Int {
        let target = state.withLock { state in
            let (sum, overflow) = state.now.addingReportingOverflow(max(0, ms))
            return overflow ? Int64.max : sum
        }
        return await advance(toMs: target)
    }

    /// Moves time forward to `targetMs` (never backwards), running the timers due on the way.
    @discardableResult
    public func advance(toMs targetMs: Int64) async -> Int {
        var fired = 0
        while let action = nextDue(until: targetMs) {
            await action()
            fired += 1
        }
        return fired
    }

    /// Runs the timers already due (armed with no delay) without moving time.
    @discardableResult
    public func runDue() async -> Int { await advance(byMs: 0) }

    /// Pops the earliest timer due by `target` and moves "now" to its deadline; with none left,
    /// moves "now" to `target` and returns nil.
    private func nextDue(until target: Int64) -> (@Sendable () async -> Void)? {
        state.withLock { state in
            while let first = state.heap.min, first.deadline <= target {
                _ = state.heap.removeMin()
                guard let action = state.actions.removeValue(forKey: first.id) else { continue }  // cancelled
                state.now = max(state.now, first.deadline)
                state.fired += 1
                return action
            }
            state.now = max(state.now, target)
            return nil
        }
    }
}
