import Testing
import IPCWire
@testable import CallEngine

/// The app side of a doorbell call (PROTOCOL.md 8.1, 8.2) and the SDK codes its endings report (3.5).
@Suite("doorbell call machine, app side (PROTOCOL.md 8.1, 8.2, 3.5)")
struct DoorbellAppEngineTests {
    static let press = DoorbellPressMessage(devId: dev, etype: "ac_doorbell", edata: callId)

    func app(_ user: String = u1, policy: AnswerPolicy = .manual, devices: Set<String> = []) -> AppDoorbellEngine {
        AppDoorbellEngine(config: AppDoorbellConfig(userId: user, devices: devices, policy: policy))
    }

    func ringingApp(_ user: String = u1) -> AppDoorbellEngine {
        var engine = app(user)
        _ = engine.handle(.doorbellPressed(Self.press), now: t0)
        return engine
    }

    func answeredApp(_ user: String = u1) -> AppDoorbellEngine {
        var engine = ringingApp(user)
        _ = engine.handle(.local(.answer), now: t0 + 1000)
        _ = engine.handle(.receivedDoorbell(vd(.answered, user)), now: t0 + 1010)
        return engine
    }

    @Test("8.1: a 43 from a household device rings the phone; the app waits for the ring timeout plus a grace")
    func rings() {
        var engine = app()
        let effects = engine.handle(.doorbellPressed(Self.press), now: t0)
        #expect(effects == [.startRinging(sessionId: callId), .armTimer(timer(.ringTimeout, callId), at: t0 + 27_000)])
        #expect(engine.phase == .ringingIncoming)
        #expect(engine.isOnCalling)
        #expect(engine.session?.peers == [dev])
        // The same press again, or another press while one rings: nothing.
        #expect(engine.handle(.doorbellPressed(Self.press), now: t0 + 10).isEmpty)
        #expect(engine.handle(.doorbellPressed(DoorbellPressMessage(devId: "dev2", etype: "doorbell", edata: "x")), now: t0 + 10).isEmpty)
    }

    @Test("8.1: a 43 from a device outside the household is ignored")
    func otherDevice() {
        var engine = app(devices: ["dev9"])
        #expect(engine.handle(.doorbellPressed(Self.press), now: t0).isEmpty)
        #expect(engine.phase == .idle)
    }

    @Test("8.2: accept, then the device's answered naming us: the link with the call id, heartbeats and a watchdog")
    func acceptAnswered() {
        var engine = ringingApp()
        let accept = engine.handle(.local(.answer), now: t0 + 1000)
        #expect(doorbellSent(accept) == [VideoDoorbellMessage(devId: dev, uid: u1, event: .accept, eData: callId)])
        #expect(engine.phase == .ringingIncoming)
        let answered = engine.handle(.receivedDoorbell(vd(.answered, u1)), now: t0 + 1010)
        #expect(answered == [
            .stopRinging(sessionId: callId),
            .expectMediaLink(sessionId: callId, peer: dev),
            .cancelTimer(timer(.ringTimeout, callId)),
            .armTimer(timer(.heartbeatSend, callId), at: t0 + 11_010),
            .armTimer(timer(.heartbeatWatchdog, callId), at: t0 + 31_010),
        ])
        #expect(engine.answeredCall == AnsweredCall(sessionId: callId, peer: dev))
        let beat = engine.handle(.timerFired(timer(.heartbeatSend, callId)), now: t0 + 11_010)
        #expect(doorbellSent(beat) == [VideoDoorbellMessage(devId: dev, uid: u1, event: .heartbeat, eData: callId)])
        #expect(engine.handle(.receivedDoorbell(vd(.heartbeat, u1)), now: t0 + 11_020)
                == [.armTimer(timer(.heartbeatWatchdog, callId), at: t0 + 41_020)])
        // Another user's heartbeat reply is not ours.
        #expect(doorbellRefusals(engine.handle(.receivedDoorbell(vd(.heartbeat, u2)), now: t0 + 11_020)).count == 1)
    }

    @Test("8.2, 3.5: answered naming another user ends our ring with -2522 answered by others")
    func answeredByOther() {
        var engine = ringingApp()
        let effects = engine.handle(.receivedDoorbell(vd(.answered, u2)), now: t0 + 2000)
        let record = endedRecord(effects)
        #expect(record?.outcome == .answeredElsewhere)
        #expect(record?.sdkError == .answeredByOthers)
        #expect(record?.answeredBy == u2)
        #expect(effects.contains(.stopRinging(sessionId: callId)))
        #expect(engine.phase == .idle)
    }

    @Test("8.2, 3.5: our accept came second: stop answered_by_other -> -2522")
    func acceptTooLate() {
        var engine = ringingApp()
        _ = engine.handle(.local(.answer), now: t0 + 1000)
        let record = endedRecord(engine.handle(.receivedDoorbell(vd(.stop, u1, reason: "answered_by_other")), now: t0 + 1010))
        #expect(record?.outcome == .answeredElsewhere)
        #expect(record?.sdkError == .answeredByOthers)
    }

    @Test("8.2, 3.5: the device's timeout -> -2530; its cancel -> -2523")
    func timeoutAndCancel() {
        var timedOut = ringingApp()
        let t = endedRecord(timedOut.handle(.receivedDoorbell(vd(.timeout, nil)), now: t0 + 25_000))
        #expect(t?.outcome == .notAnswered && t?.sdkError == .timeout)
        var cancelled = ringingApp()
        let c = endedRecord(cancelled.handle(.receivedDoorbell(vd(.cancel, nil)), now: t0 + 3000))
        #expect(c?.outcome == .cancelled && c?.sdkError == .cancelled)
    }

    @Test("8.2, 3.5: the device's stop after answered: no reason -2513, heartbeat_timeout -2532, connect_failed -2531, shutdown -2533",
          arguments: [(String?.none, SDKError.peerHungUp, CallOutcome.hungUp),
                      ("heartbeat_timeout", .disconnect, .stopped),
                      ("disconnected", .disconnect, .stopped),
                      ("connect_failed", .connectFailed, .stopped),
                      ("shutdown", .remoteStop, .stopped)])
    func deviceStops(reason: String?, code: SDKError, outcome: CallOutcome) {
        var engine = answeredApp()
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u1, reason: reason)), now: t0 + 5000)
        #expect(doorbellSent(effects).isEmpty)
        #expect(effects.contains(.closeMediaLink(sessionId: callId)))
        #expect(endedRecord(effects)?.sdkError == code)
        #expect(endedRecord(effects)?.outcome == outcome)
    }

    @Test("8.2: a stop naming another user is theirs: nothing changes")
    func stopForOther() {
        var engine = answeredApp()
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u2, reason: "answered_by_other")), now: t0 + 5000)
        #expect(doorbellRefusals(effects) == [.notAddressedToUs(targetId: u2)])
        #expect(engine.phase == .answered)
    }

    @Test("3.3: no heartbeat reply for heartbeatTimeout -> stop heartbeat_timeout and -2532")
    func watchdog() {
        var engine = answeredApp()
        let effects = engine.handle(.timerFired(timer(.heartbeatWatchdog, callId)), now: t0 + 31_010)
        #expect(doorbellSent(effects).map(\.reason) == ["heartbeat_timeout"])
        #expect(endedRecord(effects)?.sdkError == .disconnect)
    }

    @Test("8.2: decline (reject or hang up before an accept) sends stop; our own doing, no SDK error")
    func decline() throws {
        for action in [LocalAction.reject, .hangUp, .busy] {
            var engine = ringingApp()
            let effects = try engine.perform(action, now: t0 + 1000)
            #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u1, event: .stop, eData: callId)])
            #expect(endedRecord(effects)?.outcome == .rejected)
            #expect(endedRecord(effects)?.sdkError == nil)
        }
    }

    @Test("8.2: hang up after the answer sends stop; the record says hungUp by us")
    func hangUp() throws {
        var engine = answeredApp()
        let effects = try engine.perform(.hangUp, now: t0 + 9000)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u1, event: .stop, eData: callId)])
        #expect(endedRecord(effects)?.outcome == .hungUp && endedRecord(effects)?.endedBy == .local)
        #expect(throws: CallActionError.wrongPhase(action: "hang up", phase: .idle)) { _ = try engine.perform(.hangUp, now: t0) }
    }

    @Test("the ring guard: no timeout or answered from the device -> -2530 (after an accept, a stop too)")
    func ringGuard() {
        var ringing = ringingApp()
        let r = ringing.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 27_000)
        #expect(doorbellSent(r).isEmpty && endedRecord(r)?.sdkError == .timeout)
        var accepting = ringingApp()
        _ = accepting.handle(.local(.answer), now: t0 + 1000)
        let a = accepting.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 27_000)
        #expect(doorbellSent(a).map(\.event) == [.stop])
        #expect(endedRecord(a)?.sdkError == .timeout)
    }

    @Test("messages of another call, or §3 events, are not this engine's")
    func notOurs() {
        var engine = ringingApp()
        #expect(doorbellRefusals(engine.handle(.receivedDoorbell(vd(.timeout, nil, "old")), now: t0)) == [.notCurrentCall(eData: "old")])
        #expect(engine.handle(.received(msg(.call, dev, u1)), now: t0).isEmpty)
        #expect(engine.phase == .ringingIncoming)
    }

    @Test("policy answerAfter accepts by itself; reject declines at once")
    func policies() {
        var auto = app(policy: .answerAfter(ms: 2000))
        let ring = auto.handle(.doorbellPressed(Self.press), now: t0)
        #expect(ring.contains(.armTimer(timer(.autoAnswer, callId), at: t0 + 2000)))
        #expect(doorbellSent(auto.handle(.timerFired(timer(.autoAnswer, callId)), now: t0 + 2000)).map(\.event) == [.accept])
        var rejecting = app(policy: .reject)
        let effects = rejecting.handle(.doorbellPressed(Self.press), now: t0)
        #expect(doorbellSent(effects).map(\.event) == [.stop])
        #expect(rejecting.phase == .idle)
    }

    @Test("shutdown: ringing -> stop shutdown; answered -> stop shutdown; then refused")
    func shutdown() {
        var engine = answeredApp()
        let effects = engine.handle(.shutdown, now: t0 + 5000)
        #expect(doorbellSent(effects).map(\.reason) == ["shutdown"])
        #expect(engine.phase == .shutDown && engine.armedTimers.isEmpty)
        #expect(doorbellRefusals(engine.handle(.receivedDoorbell(vd(.cancel, nil)), now: t0)) == [.shutDown])
    }
}
