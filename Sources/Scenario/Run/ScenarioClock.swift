import Foundation
import Synchronization

/// The time a scenario run reads and waits on, and the runner's only way to wait (docs/scenarios.md).
///
/// Waits are driven by events: the world calls `changed()` whenever something happens (a device or
/// app event), and a waiter wakes at a change after the version it last checked or at its deadline,
/// whichever comes first. Nothing polls. Two clocks implement it: `WallScenarioClock` (real time:
/// a deadline is a timer) and `SimulatedScenarioClock` (`--simulated`: time is the simulator's and
/// only moves when every part of the run is waiting, so a 30 s wait costs no wall time).
public protocol ScenarioClock: AnyObject, Sendable {
    /// The time now (real, or the simulator's).
    var now: Date { get }
    /// How many changes the world has reported so far.
    var version: UInt64 { get }
    /// The world's state changed: every waiter re-checks.
    func changed()
    /// Waits until a change after `version` (returns true), or `deadline` (false). With `version`
    /// nil only the deadline ends it (a sleep). A cancelled task returns at once (false).
    func wait(after version: UInt64?, until deadline: Date) async -> Bool
    /// `count` concurrent parts of the run (tasks) are about to start; each calls `ended()` when
    /// it is done. The simulated clock keeps time still while any part is running.
    func started(_ count: Int)
    /// A part started with `started` is done.
    func ended()
    /// The run is over: time stops (the simulated clock's driver ends; whoever still waits wakes).
    func finish()
}

extension ScenarioClock {
    /// Waits `seconds` (no change wakes it).
    func sleep(_ seconds: Double) async {
        guard seconds > 0, seconds.isFinite else { return }
        _ = await wait(after: nil, until: now.addingTimeInterval(seconds))
    }

    /// Runs `check` now and again after each change until it holds (true) or `deadline` passes (false).
    func waitUntil(_ deadline: Date, _ check: () async -> Bool) async -> Bool {
        while true {
            let seen = version
            if await check() { return true }
            if now >= deadline || Task.isCancelled { return false }
            _ = await wait(after: seen, until: deadline)
        }
    }
}

/// The waiters of a clock: who waits for a change after which version, until when.
struct ClockWaiters {
    struct Waiter {
        var after: UInt64?
        var deadline: Date
        var continuation: CheckedContinuation<Bool, Never>
    }

    var version: UInt64 = 0
    var waiting: [UInt64: Waiter] = [:]
    var nextId: UInt64 = 0

    /// Bumps the version; returns the waiters a change wakes (removed).
    mutating func change() -> [CheckedContinuation<Bool, Never>] {
        version &+= 1
        let woken = waiting.filter { $0.value.after != nil }
        for id in woken.keys { waiting.removeValue(forKey: id) }
        return woken.values.map(\.continuation)
    }

    mutating func add(_ waiter: Waiter) -> UInt64 {
        let id = nextId
        nextId &+= 1
        waiting[id] = waiter
        return id
    }
}

/// Real time: `Date()`, a deadline is a one-shot timer task racing the changes.
public final class WallScenarioClock: ScenarioClock {
    private let state = Mutex(ClockWaiters())

    public init() {}

    public var now: Date { Date() }
    public var version: UInt64 { state.withLock { $0.version } }

    public func changed() {
        for c in state.withLock({ $0.change() }) { c.resume(returning: true) }
    }

    public func wait(after version: UInt64?, until deadline: Date) async -> Bool {
        let id = Mutex<UInt64?>(nil)
        let timer = Mutex<Task<Void, Never>?>(nil)
        return await withTaskCancellationHandler {
            let woken = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let registered = state.withLock { s -> UInt64? in
                    if let version, s.version > version { return nil }
                    if Task.isCancelled { return nil }
                    return s.add(ClockWaiters.Waiter(after: version, deadline: deadline, continuation: c))
                }
                guard let registered else {
                    c.resume(returning: version.map { v in self.version > v } ?? false)
                    return
                }
                id.withLock { $0 = registered }
                let seconds = max(0, deadline.timeIntervalSinceNow)
                timer.withLock {
                    $0 = Task { [weak self] in
                        try? await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
                        self?.resume(registered, with: false)
                    }
                }
            }
            timer.withLock { $0?.cancel() }
            return woken
        } onCancel: {
            if let registered = id.withLock({ $0 }) { resume(registered, with: false) }
        }
    }

    private func resume(_ id: UInt64, with value: Bool) {
        state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume(returning: value)
    }

    public func started(_ count: Int) {}
    public func ended() {}
}

extension WallScenarioClock {
    /// Real time ends with the run: nothing to stop.
    public func finish() {}
}
