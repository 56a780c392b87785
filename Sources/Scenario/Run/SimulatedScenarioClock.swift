import Foundation
import Synchronization

/// A discrete-event world the simulated clock drives (`SimulatedWorld`): the time of its next
/// event, and running that event (the world reports what it changed through the run's sink).
public protocol DiscreteEventWorld: Sendable {
    /// The time of the next event (unix ms), nil when none is scheduled.
    func nextEventTime() -> Int64?
    /// Runs the next event; the world's clock reads `timeMs` meanwhile.
    func runNextEvent(at timeMs: Int64)
}

/// Simulated time for `ipcemu scenario run --simulated`: the time is the simulator's, and it moves
/// only when every part of the run (the steps, each `on:` branch) is waiting. Then the driver takes
/// the earliest of the world's next event and the waiters' deadlines: an event runs (the world
/// reports its changes, which wake waiters), or time jumps to the deadline and those waiters wake.
/// A wait of 30 s costs no wall time; the same steps see the same order of events as in real time.
public final class SimulatedScenarioClock: ScenarioClock {
    private struct State {
        var waiters = ClockWaiters()
        var nowMs: Int64
        /// Parts of the run that are running (not waiting on this clock).
        var busy = 0
        var driverStarted = false
        var finished = false
        /// While the driver runs an event, the waiters its changes wake are held here and resumed
        /// only once the whole event is delivered: a woken step must not act while the rest of the
        /// event's observations are still being recorded (that made the order of one timeline
        /// depend on thread scheduling).
        var holding = false
        var held: [CheckedContinuation<Bool, Never>] = []
        /// The driver, waiting for every part to wait.
        var idle: CheckedContinuation<Void, Never>?

        /// One part more or less; at 0 the driver may go on.
        mutating func add(_ n: Int) -> CheckedContinuation<Void, Never>? {
            busy += n
            guard busy <= 0, let c = idle else { return nil }
            idle = nil
            return c
        }
    }

    private let state: Mutex<State>
    private let world: Mutex<(any DiscreteEventWorld)?> = Mutex(nil)

    /// Starts at `startMs` (unix ms).
    public init(startMs: Int64) {
        state = Mutex(State(nowMs: startMs))
    }

    /// The world whose events this clock runs (set once, before the run).
    public func drive(_ world: any DiscreteEventWorld) {
        self.world.withLock { $0 = world }
    }

    public var nowMs: Int64 { state.withLock { $0.nowMs } }
    public var now: Date { Date(timeIntervalSince1970: Double(nowMs) / 1000) }
    public var version: UInt64 { state.withLock { $0.waiters.version } }

    public func changed() {
        let woken = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            let w = s.waiters.change()
            s.busy += w.count
            if s.holding {
                s.held += w
                return []
            }
            return w
        }
        for c in woken { c.resume(returning: true) }
    }

    public func wait(after version: UInt64?, until deadline: Date) async -> Bool {
        let deadlineMs = Int64((deadline.timeIntervalSince1970 * 1000).rounded(.up))
        let id = Mutex<UInt64?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let (immediate, driver) = state.withLock { s -> (Bool?, CheckedContinuation<Void, Never>?) in
                    if let version, s.waiters.version > version { return (true, nil) }
                    if s.finished || deadlineMs <= s.nowMs || Task.isCancelled { return (false, nil) }
                    let registered = s.waiters.add(ClockWaiters.Waiter(after: version, deadline: deadline, continuation: c))
                    id.withLock { $0 = registered }
                    return (nil, s.add(-1))
                }
                if let immediate { c.resume(returning: immediate) }
                driver?.resume()
            }
        } onCancel: {
            guard let registered = id.withLock({ $0 }) else { return }
            let waiter = state.withLock { s -> ClockWaiters.Waiter? in
                guard let w = s.waiters.waiting.removeValue(forKey: registered) else { return nil }
                s.busy += 1
                return w
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    public func started(_ count: Int) {
        let startDriver = state.withLock { s -> Bool in
            s.busy += count
            guard !s.driverStarted else { return false }
            s.driverStarted = true
            return true
        }
        if startDriver { Task { await self.runDriver() } }
    }

    public func ended() {
        state.withLock { $0.add(-1) }?.resume()
    }

    public func finish() {
        let (waiters, driver) = state.withLock { s -> ([CheckedContinuation<Bool, Never>], CheckedContinuation<Void, Never>?) in
            s.finished = true
            let all = s.waiters.waiting.values.map(\.continuation)
            s.waiters.waiting.removeAll()
            let d = s.idle
            s.idle = nil
            return (all, d)
        }
        for w in waiters { w.resume(returning: false) }
        driver?.resume()
        world.withLock { $0 = nil }  // the world holds this clock: no cycle outlives the run
    }

    // MARK: The driver

    /// Until the run finishes: waits until every part waits, then runs the next event or wakes the
    /// next deadline's waiters.
    private func runDriver() async {
        while true {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let go = state.withLock { s -> Bool in
                    if s.busy <= 0 || s.finished { return true }
                    s.idle = c
                    return false
                }
                if go { c.resume() }
            }
            guard let world = world.withLock({ $0 }) else { return }
            if state.withLock({ $0.finished }) { return }
            let next = world.nextEventTime()
            let deadline = state.withLock { s in s.waiters.waiting.values.map(\.deadline).min() }
            let deadlineMs = deadline.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.up)) }
            if let next, next <= (deadlineMs ?? .max) {
                let at = state.withLock { s -> Int64 in
                    s.nowMs = max(s.nowMs, next)
                    s.holding = true
                    return s.nowMs
                }
                world.runNextEvent(at: at)
                let woken = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
                    s.holding = false
                    defer { s.held.removeAll() }
                    return s.held
                }
                for c in woken { c.resume(returning: true) }
            } else if let deadlineMs {
                let due = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
                    s.nowMs = max(s.nowMs, deadlineMs)
                    let now = s.nowMs
                    let ids = s.waiters.waiting.filter { Int64(($0.value.deadline.timeIntervalSince1970 * 1000).rounded(.up)) <= now }.map(\.key)
                    let w = ids.compactMap { s.waiters.waiting.removeValue(forKey: $0)?.continuation }
                    s.busy += w.count
                    return w
                }
                for c in due { c.resume(returning: false) }
            } else {
                // Nothing is scheduled and nobody waits with a deadline: the run cannot go on.
                return
            }
        }
    }
}
