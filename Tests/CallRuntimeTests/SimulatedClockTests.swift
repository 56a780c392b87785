import CallEngine
import CallRuntime
import Synchronization
import Testing

/// Issue 23 "Seams": simulated time fires timers when it advances, in deadline order, with "now"
/// at each timer's deadline; nothing fires on its own.
@Suite("SimulatedClock: timers fire when the clock advances")
struct SimulatedClockTests {
    @Test("due timers run in deadline order (ties in scheduling order), each seeing its own deadline as now")
    func order() async {
        let sim = SimulatedClock(nowMs: 1_000)
        let seen = Mutex<[(String, Int64)]>([])
        for (name, at) in [("c", 1_300), ("a", 1_100), ("b1", 1_200), ("b2", 1_200), ("late", 5_000)] {
            sim.schedule(atMs: Int64(at), nowMs: 1_000) { seen.withLock { $0.append((name, sim.nowMs())) } }
        }
        #expect(sim.pendingCount == 5)
        #expect(sim.nextDeadlineMs == 1_100)
        let fired = await sim.advance(byMs: 300)
        #expect(fired == 4)
        #expect(seen.withLock { $0.map(\.0) } == ["a", "b1", "b2", "c"])
        #expect(seen.withLock { $0.map(\.1) } == [1_100, 1_200, 1_200, 1_300])
        #expect(sim.nowMs() == 1_300)
        #expect(sim.pendingCount == 1)
    }

    @Test("nothing fires before the clock reaches its deadline; a cancelled timer never fires")
    func notBefore() async {
        let sim = SimulatedClock(nowMs: 0)
        let count = Mutex(0)
        sim.schedule(atMs: 1_000, nowMs: 0) { count.withLock { $0 += 1 } }
        let cancelled = sim.schedule(atMs: 500, nowMs: 0) { count.withLock { $0 += 100 } }
        sim.cancel(cancelled)
        #expect(await sim.advance(byMs: 999) == 0)
        #expect(count.withLock { $0 } == 0)
        #expect(await sim.advance(byMs: 1) == 1)
        #expect(count.withLock { $0 } == 1)
        #expect(sim.pendingCount == 0)
        #expect(sim.nextDeadlineMs == nil)
    }

    @Test("a timer armed by a timer inside the window fires in the same advance; one beyond waits")
    func chained() async {
        let sim = SimulatedClock(nowMs: 0)
        let times = Mutex<[Int64]>([])
        @Sendable func tick() {
            times.withLock { $0.append(sim.nowMs()) }
            sim.schedule(atMs: sim.nowMs() + 400, nowMs: sim.nowMs()) { tick() }
        }
        sim.schedule(atMs: 400, nowMs: 0) { tick() }
        await sim.advance(byMs: 1_000)
        #expect(times.withLock { $0 } == [400, 800])
        #expect(sim.nowMs() == 1_000)
        #expect(sim.nextDeadlineMs == 1_200)
    }

    @Test("deadlines from the wire saturate: Int64.max waits (clamped), the past fires at once; the clock never goes back")
    func extremes() async {
        let sim = SimulatedClock(nowMs: 0)
        let count = Mutex(0)
        sim.schedule(atMs: .max, nowMs: .min) { count.withLock { $0 += 100 } }
        sim.schedule(atMs: .min, nowMs: .max) { count.withLock { $0 += 1 } }
        #expect(await sim.runDue() == 1)
        #expect(sim.nextDeadlineMs == TimerScheduler.maximumDelayMs)
        await sim.advance(byMs: -50)
        #expect(sim.nowMs() == 0)
        await sim.advance(toMs: -10)
        #expect(sim.nowMs() == 0)
        #expect(count.withLock { $0 } == 1)
    }

    @Test("an engine host on simulated time: the ring deadline ends the call when the clock reaches it")
    func engineHost() async throws {
        let sim = SimulatedClock(nowMs: EngineHostTests.t0)
        let host = Mutex(EngineHost(engine: DeviceCallEngine(config: DeviceEngineConfig(
            devId: "dev1", answerPolicy: .manual, household: ["u1"], defaultCallType: .oneToOne)), clock: sim, scheduler: sim))
        let ended = Mutex<[CallEffect]>([])
        @Sendable func fire(_ timer: CallTimer) async {
            let effects = host.withLock { $0.handle(.timerFired(timer), fire: fire) }
            ended.withLock { $0 += effects }
        }
        _ = host.withLock { $0.handle(.received(EngineHostTests.call(deadline: EngineHostTests.t0 + 30_000)), fire: fire) }
        #expect(host.withLock { $0.armedTimerCount } == 1)
        await sim.advance(byMs: 29_999)
        #expect(ended.withLock { $0.isEmpty })
        await sim.advance(byMs: 1)
        #expect(ended.withLock { effects in effects.contains { if case .callEnded = $0 { true } else { false } } })
        #expect(host.withLock { $0.armedTimerCount } == 0)
        #expect(sim.pendingCount == 0)
    }
}

/// The real scheduler behind the same seam: one thread, real (monotonic) time.
@Suite("TimerScheduler behind TimerScheduling")
struct RealSchedulerSeamTests {
    @Test("an async action (an actor hop) runs once its delay has passed; cancel and shutdown leave nothing pending")
    func asyncAction() async {
        let scheduler = TimerScheduler(name: "seam-test")
        defer { scheduler.shutdown() }
        let seam: any TimerScheduling = scheduler
        let fired = AsyncStream.makeStream(of: String.self)
        let never = seam.schedule(atMs: 3_600_000, nowMs: 0) { fired.continuation.yield("never") }  // an hour: no stall reaches it
        seam.schedule(atMs: 20, nowMs: 0) { fired.continuation.yield("hop") }
        var iterator = fired.stream.makeAsyncIterator()
        #expect(await iterator.next() == "hop")
        #expect(seam.pendingCount == 1)
        seam.cancel(never)
        #expect(seam.pendingCount == 0)
    }
}
