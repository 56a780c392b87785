import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.4: "Every number from the wire is range-checked before any arithmetic: a deadline
/// that has passed (zero and negative values included) is expired; a deadline more than 24 h ahead
/// counts as 24 h ahead; a callType or channelType outside its listed values is invalid_params."
/// Each of these once trapped (integer overflow) or was silently dropped.
@Suite("Wire numbers at their extremes (3.4)")
struct WireNumberTests {
    @Test("a deadline of Int64.max rings, capped at 24 h: its timer is armed at now + 24 h", arguments: [
        Int64.max, Int64.max - 1, t0 + maxCallDeadlineAheadMs + 1,
    ])
    func farDeadlineIsCapped(_ deadline: Int64) {
        var d = deviceEngine()
        let effects = d.receive(call(deadline: deadline), now: t0)
        #expect(sent(effects) == [msg(.ring, dev, u1)])
        #expect(effects.contains(.armTimer(timer(.callDeadline), at: t0 + maxCallDeadlineAheadMs)))
        #expect(d.session?.deadline == t0 + maxCallDeadlineAheadMs)
    }

    @Test("a deadline exactly 24 h ahead is kept as it is")
    func deadlineAtTheCap() {
        var d = deviceEngine()
        let effects = d.receive(call(deadline: t0 + maxCallDeadlineAheadMs), now: t0)
        #expect(effects.contains(.armTimer(timer(.callDeadline), at: t0 + maxCallDeadlineAheadMs)))
    }

    @Test("a deadline that has passed, zero or negative: stop expired, nothing changes", arguments: [
        Int64.min, Int64.min + 1, -1, 0, 1, t0 - 1, t0,
    ])
    func pastDeadlineIsExpired(_ deadline: Int64) {
        var d = deviceEngine()
        let c = call(deadline: deadline)
        let effects = d.receive(c, now: t0)
        #expect(effects == [.refused(c, .expired(deadline: deadline, now: t0)), .send(msg(.stop, dev, u1, reason: .expired))])
        #expect(d.phase == .idle)
        // The log text of the refusal does arithmetic on the deadline too.
        #expect(Refusal.expired(deadline: deadline, now: t0).description.hasPrefix("expired: deadline"))
    }

    @Test("the refusal text saturates instead of trapping")
    func refusalTextSaturates() {
        #expect(Refusal.expired(deadline: .min, now: .max).description.contains("\(Int64.max) ms past"))
        #expect(Refusal.expired(deadline: .max, now: .min).description.contains("\(Int64.min) ms past"))
    }

    @Test("a call whose callType was out of range on the wire: stop invalid_params, the session goes on")
    func callTypeProblem() {
        var d = ringingDevice()
        var c = call(from: u2, session: "s2")
        c.problem = "field 'data.data.callType' has value 9; expected 1, 2 or 3"
        let effects = d.receive(c, now: t0 + 10)
        #expect(effects == [.refused(c, .invalidParams(c.problem ?? "")),
                            .send(msg(.stop, dev, u2, "s2", reason: .invalidParams))])
        #expect(d.phase == .ringingIncoming && d.session?.sessionId == "s1")
    }

    @Test("a channelType at the Int extremes: stop invalid_params", arguments: [Int.min, -1, 3, Int.max])
    func channelTypeExtremes(_ value: Int) {
        var d = deviceEngine()
        let c = call(extra: CallExtra(channelType: value))
        #expect(sent(d.receive(c, now: t0)) == [msg(.stop, dev, u1, reason: .invalidParams)])
        #expect(d.phase == .idle)
    }

    @Test("the app role takes a far deadline too (it adds its grace: saturating)")
    func appFarDeadline() {
        var a = appEngine(u1)
        let c = CallMessage(event: .call, curId: dev, targetId: u1, sessionId: "s1", timeout: .max,
                            extra: CallExtra(category: "sp_dpsxj"))
        let effects = a.receive(c, now: t0)
        #expect(sent(effects) == [msg(.ring, u1, dev)])
        let armed = effects.compactMap { e -> Int64? in if case .armTimer(let t, let at) = e, t.kind == .callDeadline { at } else { nil } }
        #expect(armed.count == 1 && armed[0] <= t0 + maxCallDeadlineAheadMs + 60_000)
    }

    @Test("a press or startCall with an enormous timeout saturates instead of trapping")
    func localHugeTimeouts() throws {
        var d = deviceEngine()
        let effects = try d.perform(.press(DoorbellPress(sessionId: "p1", targets: [u1], timeoutMs: .max)), now: t0)
        #expect(effects.contains(.armTimer(timer(.callDeadline, "p1"), at: .max)))
        var a = appEngine(u1)
        let start = StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: .max)
        let appEffects = try a.perform(.startCall(start), now: t0)
        #expect(sent(appEffects).first?.timeout == .max)
    }

    @Test("saturating arithmetic at the edges")
    func saturation() {
        #expect(Int64.max.addingSaturating(1) == .max)
        #expect(Int64.min.addingSaturating(-1) == .min)
        #expect(Int64(5).addingSaturating(-7) == -2)
        #expect(Int64.min.subtractingSaturating(1) == .min)
        #expect(Int64.max.subtractingSaturating(-1) == .max)
        #expect(Int64.max.multipliedSaturating(by: 1000) == .max)
        #expect(Int64.min.multipliedSaturating(by: 1000) == .min)
        #expect(Int64.max.multipliedSaturating(by: -2) == .min)
        #expect(WireTime.callDeadline(.max, now: .max) == .max)
        #expect(WireTime.callDeadline(.min, now: t0) == .min)
    }
}
