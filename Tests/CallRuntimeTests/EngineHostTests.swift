import CallEngine
import Foundation
import IPCWire
import Testing
@testable import CallRuntime

/// The one engine host (issue 9): the glue `Device` and `AppUser` share, driven here without a
/// broker, a socket or a real clock.
@Suite("Engine host: clock, timers and effects for either role")
struct EngineHostTests {
    static let t0: Int64 = 1_732_200_000_000

    static func device(clock: ManualClock, scheduler: TimerScheduler) -> EngineHost<DeviceCallEngine> {
        EngineHost(engine: DeviceCallEngine(config: DeviceEngineConfig(
            devId: "dev1", supportedChannelTypes: Set(ChannelType.allCases), answerPolicy: .manual,
            household: ["u1"], defaultCallType: .oneToOne)), clock: clock, scheduler: scheduler)
    }

    static func call(deadline: Int64) -> CallMessage {
        CallMessage(event: .call, curId: "u1", targetId: "dev1", sessionId: "s1", timeout: deadline,
                    extra: CallExtra(category: "sp_dpsxj"))
    }

    @Test("the host keeps the timers and hands back every other effect in order")
    func timersStayInside() {
        let scheduler = TimerScheduler(name: "host-test")
        defer { scheduler.shutdown() }
        let clock = ManualClock(nowMs: Self.t0)
        var host = Self.device(clock: clock, scheduler: scheduler)
        let effects = host.handle(.received(Self.call(deadline: Self.t0 + 30_000)), fire: { _ in })
        #expect(!effects.contains { if case .armTimer = $0 { true } else { false } })
        #expect(effects.contains { if case .startRinging("s1") = $0 { true } else { false } })
        #expect(host.armedTimerCount > 0)
        #expect(scheduler.pendingCount == host.armedTimerCount)
        // Shutdown: the ringing call is rejected with reason shutdown and nothing stays armed.
        let last = host.shutdown()
        let rejects = last.compactMap { if case .send(let m) = $0 { m } else { nil } }
        #expect(rejects.map(\.event) == [.reject])
        #expect(rejects.first?.reason == StopReason.shutdown.rawValue)
        #expect(host.armedTimerCount == 0)
        #expect(scheduler.pendingCount == 0)
    }

    @Test("the engine is fed the injected clock's time: a deadline behind it is expired")
    func injectedClock() {
        let scheduler = TimerScheduler(name: "host-test")
        defer { scheduler.shutdown() }
        // The same call rings at t0 and is expired an hour later, on the host's clock alone.
        let clock = ManualClock(nowMs: Self.t0)
        var ringing = Self.device(clock: clock, scheduler: scheduler)
        #expect(ringing.handle(.received(Self.call(deadline: Self.t0 + 30_000)), fire: { _ in })
            .contains { if case .startRinging = $0 { true } else { false } })
        clock.advance(byMs: 3_600_000)
        var late = Self.device(clock: clock, scheduler: scheduler)
        let sent = late.handle(.received(Self.call(deadline: Self.t0 + 30_000)), fire: { _ in })
            .compactMap { if case .send(let m) = $0 { m } else { nil } }
        #expect(sent.map(\.event) == [.stop])
        #expect(sent.first?.reason == StopReason.expired.rawValue)
    }

    @Test("a due timer reaches the owner through `fire`, and feeding it back ends the ring")
    func timerFires() async throws {
        let scheduler = TimerScheduler(name: "host-test")
        defer { scheduler.shutdown() }
        // The clock says the deadline is 50 ms away: the scheduler waits that long in real time.
        let clock = ManualClock(nowMs: Self.t0)
        var host = Self.device(clock: clock, scheduler: scheduler)
        let due = AsyncStream.makeStream(of: CallTimer.self)
        _ = host.handle(.received(Self.call(deadline: Self.t0 + 50)), fire: { due.continuation.yield($0) })
        var iterator = due.stream.makeAsyncIterator()
        let timer = try #require(await iterator.next())
        clock.advance(byMs: 50)
        let effects = host.handle(.timerFired(timer), fire: { _ in })
        #expect(effects.contains { if case .stopRinging = $0 { true } else { false } })
        #expect(effects.contains { if case .callEnded = $0 { true } else { false } })
    }

    @Test("arming at the extremes does not trap; a far timer waits, a past one fires at once")
    func armExtremes() async throws {
        let scheduler = TimerScheduler(name: "host-test")
        defer { scheduler.shutdown() }
        var timers = ScheduledTimers(scheduler: scheduler)
        let far = CallTimer(.callDeadline, sessionId: "far")
        let past = CallTimer(.callDeadline, sessionId: "past")
        let fired = AsyncStream.makeStream(of: CallTimer.self)
        timers.arm(far, atMs: .max, nowMs: .min) { fired.continuation.yield($0) }
        timers.arm(past, atMs: .min, nowMs: .max) { fired.continuation.yield($0) }
        #expect(timers.armedCount == 2)
        var iterator = fired.stream.makeAsyncIterator()
        #expect(await iterator.next() == past)
        // A marker scheduled now fires after anything already due: the far timer has not.
        scheduler.schedule(atMs: 0, nowMs: 0) { fired.continuation.yield(CallTimer(.callDeadline, sessionId: "marker")) }
        #expect(await iterator.next()?.sessionId == "marker")
        timers.cancelAll()
        #expect(timers.armedCount == 0)
        #expect(scheduler.pendingCount == 0)
    }
}
