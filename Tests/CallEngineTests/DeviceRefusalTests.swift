import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.4: what the device refuses, and how.
@Suite("Device: bad input (3.4)")
struct DeviceRefusalTests {
    private func expectInvalidParams(_ c: CallMessage, on engine: DeviceCallEngine = deviceEngine(),
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        var d = engine
        let phaseBefore = d.phase
        let sessionBefore = d.session
        let effects = d.receive(c, now: t0)
        #expect(sent(effects) == [msg(.stop, dev, c.curId, c.sessionId, reason: .invalidParams)],
                sourceLocation: sourceLocation)
        guard case .refused(let refusedMessage, .invalidParams(_))? = effects.first else {
            Issue.record("no .refused(invalidParams) effect: \(effects)", sourceLocation: sourceLocation)
            return
        }
        #expect(refusedMessage == c, sourceLocation: sourceLocation)
        #expect(d.phase == phaseBefore, sourceLocation: sourceLocation)
        #expect(d.session == sessionBefore, sourceLocation: sourceLocation)
    }

    @Test("a call whose targetId is not this device: stop invalid_params")
    func wrongTarget() { expectInvalidParams(call(to: "dev2")) }

    @Test("a call without extra: stop invalid_params")
    func missingExtra() { expectInvalidParams(call(extra: nil)) }

    @Test("a call without extra.bizType: stop invalid_params")
    func missingBizType() { expectInvalidParams(call(extra: CallExtra(bizType: nil))) }

    @Test("a call whose bizType is not screen_ipc: stop invalid_params")
    func wrongBizType() { expectInvalidParams(call(extra: CallExtra(bizType: "ipc"))) }

    @Test("a call whose extra had a decoding problem: stop invalid_params")
    func extraProblem() {
        expectInvalidParams(call(extra: CallExtra(problem: "'data.data.extra.keepConnect' must be a boolean")))
    }

    @Test("a call with a channelType the profile does not support: stop invalid_params")
    func unsupportedChannel() {
        let audioOnly = deviceEngine(channels: [.audio])
        expectInvalidParams(call(extra: CallExtra(channelType: 2)), on: audioOnly)
        expectInvalidParams(call(extra: CallExtra(channelType: 7)))
        var d = audioOnly
        #expect(sent(d.receive(call(extra: CallExtra(channelType: 0)), now: t0)) == [msg(.ring, dev, u1)])
    }

    @Test("an invalid call while in a session: stop invalid_params, the session goes on untouched")
    func invalidWhileInSession() {
        expectInvalidParams(call(from: u2, to: "other", session: "s2"), on: ringingDevice())
    }

    @Test("a call (or any event) without curId or sessionId: dropped, no one to answer")
    func anonymousDropped() {
        var d = ringingDevice()
        let noSender = call(from: "", to: "elsewhere")
        #expect(d.receive(noSender, now: t0) == [.refused(noSender, .anonymous)])
        let noSession = msg(.hangUp, u1, dev, "")
        #expect(d.receive(noSession, now: t0) == [.refused(noSession, .anonymous)])
        #expect(d.phase == .ringingIncoming)
    }

    @Test("a call whose deadline has already passed: stop expired")
    func expiredCall() {
        var d = deviceEngine()
        let c = call(deadline: t0 - 1)
        let effects = d.receive(c, now: t0)
        #expect(effects == [
            .refused(c, .expired(deadline: t0 - 1, now: t0)),
            .send(msg(.stop, dev, u1, reason: .expired)),
        ])
        #expect(d.phase == .idle)
    }

    @Test("an event for a session the device does not have: stop undefined_session; its own session untouched")
    func unknownSession() {
        var d = ringingDevice()
        let m = msg(.hangUp, u1, dev, "nope")
        let effects = d.receive(m, now: t0 + 100)
        #expect(effects == [.refused(m, .undefinedSession), .send(msg(.stop, dev, u1, "nope", reason: .undefinedSession))])
        #expect(d.phase == .ringingIncoming)
        #expect(d.session?.sessionId == "s1")
    }

    @Test("an event while idle: stop undefined_session")
    func eventWhileIdle() {
        var d = deviceEngine()
        #expect(sent(d.receive(msg(.answer, u2, dev, "x"), now: t0)) == [msg(.stop, dev, u2, "x", reason: .undefinedSession)])
        #expect(sent(d.receive(msg(.heartbeat, u2, dev, "x"), now: t0)) == [msg(.stop, dev, u2, "x", reason: .undefinedSession)])
    }

    @Test("an event from a user who is not in the session: stop undefined_session; session untouched")
    func strangerInSession() {
        var d = answeredIncomingDevice()
        let m = msg(.hangUp, "mallory", dev)
        let effects = d.receive(m, now: t0 + 2000)
        #expect(effects == [.refused(m, .notInSession(userId: "mallory")),
                            .send(msg(.stop, dev, "mallory", reason: .undefinedSession))])
        #expect(d.answeredCall == AnsweredCall(sessionId: "s1", peer: u1))
    }

    @Test("never answer a stop with a stop (unknown session or stranger)")
    func stopIsNeverAnswered() {
        var d = ringingDevice()
        #expect(sent(d.receive(msg(.stop, u1, dev, "nope", reason: .undefinedSession), now: t0)).isEmpty)
        #expect(sent(d.receive(msg(.stop, "mallory", dev, reason: .undefinedSession), now: t0)).isEmpty)
        var idle = deviceEngine()
        #expect(sent(idle.receive(msg(.stop, u1, dev), now: t0)).isEmpty)
        #expect(d.phase == .ringingIncoming)
    }

    @Test("events only a device sends are logged and change nothing")
    func deviceOnlyEvents() {
        var d = answeredIncomingDevice()
        for event in [CallEvent.notAnswered, .alreadyAnswered, .alreadyRejected] {
            let m = msg(event, u1, dev)
            #expect(d.receive(m, now: t0 + 2000) == [.refused(m, .unexpected(event: event, phase: .answered))])
        }
        #expect(d.phase == .answered)
    }

    @Test("operator actions that make no sense return a typed error and change nothing")
    func badLocalActions() {
        var d = deviceEngine()
        #expect(throws: CallActionError.wrongPhase(action: "answer", phase: .idle)) { try d.perform(.answer, now: t0) }
        #expect(throws: CallActionError.wrongPhase(action: "hang up", phase: .idle)) { try d.perform(.hangUp, now: t0) }
        #expect(throws: CallActionError.wrongPhase(action: "cancel", phase: .idle)) { try d.perform(.cancel, now: t0) }
        #expect(throws: CallActionError.notInThisRole(action: "startCall", role: .device)) {
            try d.perform(.startCall(StartCall(targetId: dev, sessionId: "x")), now: t0)
        }
        var ringing = ringingDevice()
        #expect(throws: CallActionError.wrongPhase(action: "hang up", phase: .ringingIncoming)) {
            try ringing.perform(.hangUp, now: t0)
        }
        // Through `handle`, the refusal is an effect.
        #expect(ringing.handle(.local(.cancel), now: t0) ==
                [.actionRefused(.cancel, .wrongPhase(action: "cancel", phase: .ringingIncoming))])
        #expect(ringing.phase == .ringingIncoming)
    }

    @Test("after shutdown every message and action is refused")
    func afterShutdown() {
        var d = deviceEngine()
        #expect(d.shutdown(now: t0) == [])
        #expect(d.phase == .shutDown)
        let c = call()
        #expect(d.receive(c, now: t0) == [.refused(c, .shutDown)])
        #expect(throws: CallActionError.shutDown) { try d.perform(.press(DoorbellPress(sessionId: "x")), now: t0) }
    }
}
