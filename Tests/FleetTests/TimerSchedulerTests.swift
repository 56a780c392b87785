import CallEngine
import CallRuntime
import Foundation
import Testing
import TestSupport

@Suite("One timer heap for many engines")
struct TimerSchedulerTests {
    @Test("Timers fire in deadline order on one thread; a cancelled one never fires; no Task per timer")
    func orderAndCancel() async throws {
        let scheduler = TimerScheduler(name: "test-timers")
        defer { scheduler.shutdown() }
        let fired = Collected<[Int]>([])
        let now = WallClock.nowMs()
        var tokens: [TimerScheduler.Token] = []
        for (i, delay) in [60, 20, 40, 10, 30].enumerated() {
            tokens.append(scheduler.schedule(atMs: now + Int64(delay), nowMs: now) { fired.withLock { $0.append(i) } })
        }
        scheduler.cancel(tokens[2])   // the 40 ms one
        // A late marker proves the moment passed: everything before it has fired or never will.
        scheduler.schedule(atMs: now + 120, nowMs: now) { fired.withLock { $0.append(99) } }
        #expect(await eventually(timeout: .seconds(5)) { fired.snapshot.last == 99 })
        #expect(fired.snapshot == [3, 1, 4, 0, 99])
        #expect(scheduler.pendingCount == 0)
    }

    @Test("Deadlines from the wire are safe: Int64.max, Int64.min and the past saturate instead of trapping")
    func saturatingDeadlines() async throws {
        let scheduler = TimerScheduler(name: "test-timers2")
        defer { scheduler.shutdown() }
        let fired = Collected(0)
        let far = scheduler.schedule(atMs: Int64.max, nowMs: -5) { fired.withLock { $0 += 100 } }
        scheduler.schedule(atMs: Int64.min, nowMs: Int64.max) { fired.withLock { $0 += 1 } }
        scheduler.schedule(atMs: -1, nowMs: WallClock.nowMs()) { fired.withLock { $0 += 1 } }
        #expect(await eventually(timeout: .seconds(5)) { fired.snapshot == 2 })
        #expect(scheduler.pendingCount == 1)
        scheduler.cancel(far)
        #expect(scheduler.pendingCount == 0)
    }

    @Test("Cancelled timers do not pile up in the heap; the live ones still fire in order")
    func cancelledEntriesAreDropped() async throws {
        let scheduler = TimerScheduler(name: "test-timers4")
        defer { scheduler.shutdown() }
        let fired = Collected<[Int]>([])
        let now = WallClock.nowMs()
        // 5,000 start-up timeouts an hour away, as a fleet's devices arm while they connect ...
        var tokens: [TimerScheduler.Token] = []
        for _ in 0..<5000 { tokens.append(scheduler.schedule(atMs: now + 3_600_000, nowMs: now) { fired.withLock { $0.append(-1) } }) }
        // Seconds away, so that none is due before the count below even on a starved machine.
        let live = WallClock.nowMs()
        for (i, delay) in [2_000, 1_000].enumerated() {
            scheduler.schedule(atMs: live + Int64(delay), nowMs: live) { fired.withLock { $0.append(i) } }
        }
        // ... each cancelled as its device comes online.
        for token in tokens { scheduler.cancel(token) }
        #expect(scheduler.pendingCount == 2)
        #expect(scheduler.heapCount <= 2 * 2 + TimerScheduler.compactionSlack)
        scheduler.schedule(atMs: live + 3_000, nowMs: WallClock.nowMs()) { fired.withLock { $0.append(99) } }
        #expect(await eventually(timeout: .seconds(30)) { fired.snapshot.last == 99 })
        #expect(fired.snapshot == [1, 0, 99])
    }

    @Test("ScheduledTimers: arming a timer again replaces it")
    func rearmReplaces() async throws {
        let scheduler = TimerScheduler(name: "test-timers3")
        defer { scheduler.shutdown() }
        var timers = ScheduledTimers(scheduler: scheduler)
        let fired = Collected<[String]>([])
        let timer = CallTimer(.heartbeatWatchdog, sessionId: "s")
        let now = WallClock.nowMs()
        timers.arm(timer, atMs: now + 30, nowMs: now) { _ in fired.withLock { $0.append("first") } }
        timers.arm(timer, atMs: now + 60, nowMs: now) { _ in fired.withLock { $0.append("second") } }
        #expect(timers.armedCount == 1)
        // The engine's timers hop onto their owner in a task, so "second" may come after the
        // marker (an inline action past both deadlines) on a busy machine: wait for both. "first"
        // was due before either; its action is gone, so it can never be among them.
        scheduler.schedule(atMs: now + 150, nowMs: now) { fired.withLock { $0.append("marker") } }
        // An upper bound, not a speed check: under plain parallel `swift test` on 2 cores the
        // task hop has waited over 5 s for a cooperative thread.
        #expect(await eventually(timeout: .seconds(30)) { fired.snapshot.count >= 2 })
        #expect(fired.snapshot.sorted() == ["marker", "second"])
    }
}
