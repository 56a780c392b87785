import Testing
import IPCWire
@testable import CallEngine

/// The device's doorbell call machine, rule by rule (PROTOCOL.md 8.1, 8.2, 8.5).
@Suite("doorbell call machine, device side (PROTOCOL.md 8.1, 8.2, 8.5)")
struct DoorbellCallEngineTests {
    // MARK: 8.1 press

    @Test("8.1: a press announces the call (the glue's 43 and DPs) and arms the 25 s ring timeout")
    func press() {
        var engine = doorbellEngine()
        let effects = engine.handle(.local(.press(DoorbellPress(sessionId: callId))), now: t0)
        #expect(effects == [.announcePress(callId: callId), .armTimer(timer(.ringTimeout, callId), at: t0 + 25_000)])
        #expect(engine.phase == .ringingOutgoing)
        #expect(engine.session?.sessionId == callId)
        #expect(engine.session?.peers == [u1, u2, u3])
        #expect(engine.session?.activePeers == [u1, u2, u3])
        #expect(engine.answeredCall == nil)
    }

    @Test("8.1: a press's timeoutMs replaces doorbell.ringTimeout for that call")
    func pressTimeout() {
        var engine = doorbellEngine()
        let effects = engine.handle(.local(.press(DoorbellPress(sessionId: callId, timeoutMs: 5000))), now: t0)
        #expect(effects.last == .armTimer(timer(.ringTimeout, callId), at: t0 + 5000))
    }

    @Test("8.1: a press while a doorbell call is ringing or connected is ignored (throws onCalling, no second 43)")
    func pressWhileBusy() throws {
        for var engine in [ringingDoorbell(), connectedDoorbell()] {
            let phase = engine.phase
            #expect(throws: CallActionError.onCalling(sessionId: callId)) {
                _ = try engine.perform(.press(DoorbellPress(sessionId: "other1732200001")), now: t0 + 2000)
            }
            let effects = engine.handle(.local(.press(DoorbellPress(sessionId: "other"))), now: t0 + 2000)
            #expect(effects == [.actionRefused(.press(DoorbellPress(sessionId: "other")), .onCalling(sessionId: callId))])
            #expect(engine.phase == phase)
            #expect(engine.session?.sessionId == callId)
        }
    }

    @Test("8.1: a press with an empty call id, a non-positive ring timeout or no household is refused")
    func pressRefusals() {
        var engine = doorbellEngine()
        #expect(throws: CallActionError.invalidArgument("empty call id")) { _ = try engine.perform(.press(DoorbellPress(sessionId: "")), now: t0) }
        #expect(throws: CallActionError.invalidArgument("ring timeout 0 ms is not positive")) {
            _ = try engine.perform(.press(DoorbellPress(sessionId: callId, timeoutMs: 0)), now: t0)
        }
        var lonely = doorbellEngine(household: ["", dev])
        #expect(throws: CallActionError.noTargets) { _ = try lonely.perform(.press(DoorbellPress(sessionId: callId)), now: t0) }
        #expect(engine.phase == .idle && lonely.phase == .idle)
    }

    // MARK: 8.2 accept

    @Test("8.2: an accept by a household user -> answered naming that user, the link expected, connectTimeout and watchdog armed")
    func accept() {
        var engine = ringingDoorbell()
        let effects = engine.handle(.receivedDoorbell(vd(.accept, u2)), now: t0 + 1000)
        #expect(effects == [
            .sendDoorbell(VideoDoorbellMessage(devId: dev, uid: u2, event: .answered, eData: callId)),
            .expectMediaLink(sessionId: callId, peer: u2),
            .cancelTimer(timer(.ringTimeout, callId)),
            .armTimer(timer(.connectTimeout, callId), at: t0 + 21_000),
            .armTimer(timer(.heartbeatWatchdog, callId), at: t0 + 31_000),
        ])
        #expect(engine.phase == .answered)
        #expect(engine.answeredCall == AnsweredCall(sessionId: callId, peer: u2))
        #expect(engine.session?.answeredBy == u2)
        #expect(engine.session?.mediaLink == .awaitingConnect)
    }

    @Test("8.2: a second accept gets stop answered_by_other to that user only; the call goes on")
    func secondAccept() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.receivedDoorbell(vd(.accept, u2)), now: t0 + 2000)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u2, event: .stop, eData: callId,
                                                              reason: "answered_by_other")])
        #expect(engine.answeredCall == AnsweredCall(sessionId: callId, peer: u1))
        #expect(engine.armedTimers.count == 2)
    }

    @Test("8.2 [ours]: the accepting user's accept again (redelivered) gets answered again, nothing else")
    func repeatedAccept() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.receivedDoorbell(vd(.accept, u1)), now: t0 + 2000)
        #expect(effects == [.sendDoorbell(VideoDoorbellMessage(devId: dev, uid: u1, event: .answered, eData: callId))])
        #expect(engine.answeredCall?.peer == u1)
    }

    // MARK: 8.2 stop

    @Test("8.2: stop before an accept = that user declines; the call rings on for the others")
    func decline() {
        var engine = ringingDoorbell()
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u1)), now: t0 + 1000)
        #expect(effects.isEmpty)
        #expect(engine.phase == .ringingOutgoing)
        #expect(engine.session?.activePeers == [u2, u3])
        // The decliner may still accept [ours].
        let accept = engine.handle(.receivedDoorbell(vd(.accept, u1)), now: t0 + 2000)
        #expect(doorbellSent(accept).map(\.event) == [.answered])
    }

    @Test("8.2: every household user declined -> timeout to everyone (no uid), DP 212 cue, the call ends rejected")
    func everyoneDeclined() {
        var engine = ringingDoorbell()
        _ = engine.handle(.receivedDoorbell(vd(.stop, u1)), now: t0 + 1000)
        _ = engine.handle(.receivedDoorbell(vd(.stop, u1)), now: t0 + 1100)  // a repeat counts once
        _ = engine.handle(.receivedDoorbell(vd(.stop, u2)), now: t0 + 1200)
        #expect(engine.phase == .ringingOutgoing)
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u3)), now: t0 + 1300)
        #expect(withoutRecord(effects) == [
            .sendDoorbell(VideoDoorbellMessage(devId: dev, event: .timeout, eData: callId)),
            .ringTimedOut(callId: callId),
            .cancelTimer(timer(.ringTimeout, callId)),
        ])
        let record = endedRecord(effects)
        #expect(record?.outcome == .rejected)
        #expect(record?.endedBy == .remote)
        #expect(record?.peers == [u1, u2, u3])
        #expect(engine.phase == .idle)
    }

    @Test("8.2: stop after the accept from the accepting user = hang up (no reply)")
    func hangUpByApp() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u1)), now: t0 + 5000)
        #expect(doorbellSent(effects).isEmpty)
        #expect(effects.first == .closeMediaLink(sessionId: callId))
        let record = endedRecord(effects)
        #expect(record?.outcome == .hungUp)
        #expect(record?.endedBy == .remote)
        #expect(record?.answeredBy == u1)
        #expect(record?.answeredAt == t0 + 1000)
        #expect(engine.phase == .idle)
        #expect(engine.armedTimers.isEmpty)
    }

    @Test("8.2: a stop after the accept from anyone but the accepting user gets nothing and changes nothing")
    func stopFromOther() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.receivedDoorbell(vd(.stop, u2)), now: t0 + 5000)
        #expect(doorbellSent(effects).isEmpty)
        #expect(doorbellRefusals(effects) == [.unexpectedDoorbell(event: .stop, phase: .answered)])
        #expect(engine.answeredCall?.peer == u1)
    }

    // MARK: 8.2 heartbeat

    @Test("8.2: a heartbeat from the accepting user gets one heartbeat reply and re-arms the watchdog")
    func heartbeat() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.receivedDoorbell(vd(.heartbeat, u1)), now: t0 + 11_000)
        #expect(effects == [
            .sendDoorbell(VideoDoorbellMessage(devId: dev, uid: u1, event: .heartbeat, eData: callId)),
            .armTimer(timer(.heartbeatWatchdog, callId), at: t0 + 41_000),
        ])
    }

    @Test("8.2: a heartbeat from another user, or before an accept, gets nothing")
    func heartbeatFromOthers() {
        var connected = connectedDoorbell(by: u1)
        #expect(doorbellSent(connected.handle(.receivedDoorbell(vd(.heartbeat, u2)), now: t0 + 2000)).isEmpty)
        var ringing = ringingDoorbell()
        let effects = ringing.handle(.receivedDoorbell(vd(.heartbeat, u1)), now: t0 + 2000)
        #expect(doorbellSent(effects).isEmpty)
        #expect(doorbellRefusals(effects) == [.unexpectedDoorbell(event: .heartbeat, phase: .ringingOutgoing)])
    }

    @Test("8.2: no heartbeat for heartbeatTimeout (30 s) -> stop heartbeat_timeout to the accepting user")
    func heartbeatTimeout() {
        var engine = connectedDoorbell(by: u2)
        _ = engine.handle(.mediaLinkUp(sessionId: callId), now: t0 + 1500)
        let effects = engine.handle(.timerFired(timer(.heartbeatWatchdog, callId)), now: t0 + 31_000)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u2, event: .stop, eData: callId,
                                                              reason: "heartbeat_timeout")])
        #expect(endedRecord(effects)?.reason == .heartbeatTimeout)
        #expect(endedRecord(effects)?.outcome == .stopped)
        #expect(engine.phase == .idle)
    }

    // MARK: 8.2 ring timeout, 8.5 message window

    @Test("8.2: no accept within doorbell.ringTimeout -> timeout (no uid), the DP 212 cue, the call ends not answered")
    func ringTimeout() {
        var engine = ringingDoorbell()
        let effects = engine.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000)
        #expect(withoutRecord(effects) == [
            .sendDoorbell(VideoDoorbellMessage(devId: dev, event: .timeout, eData: callId)),
            .ringTimedOut(callId: callId),
        ])
        #expect(endedRecord(effects)?.outcome == .notAnswered)
        #expect(endedRecord(effects)?.reason == .timeout)
        #expect(endedRecord(effects)?.endedBy == .local)
        #expect(engine.phase == .idle)
        #expect(engine.messageWindowCallId == nil)
        // Messages off: the next press is a new call.
        let next = engine.handle(.local(.press(DoorbellPress(sessionId: "next"))), now: t0 + 26_000)
        #expect(next.first == .announcePress(callId: "next"))
    }

    @Test("8.5: with messages on, the window opens at the timeout; a press inside it leaves a message: no 43")
    func messageWindowPress() {
        var engine = ringingDoorbell(messages: true)
        let effects = engine.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000)
        #expect(effects.last == .armTimer(timer(.messageWindow, dev), at: t0 + 40_000))
        #expect(engine.messageWindowCallId == callId)
        #expect(engine.phase == .idle)
        let press = engine.handle(.local(.press(DoorbellPress(sessionId: "visitor2"))), now: t0 + 39_999)
        #expect(press == [.leaveMessage(callId: callId), .cancelTimer(timer(.messageWindow, dev))])
        #expect(!press.contains { if case .announcePress = $0 { true } else { false } })
        // [ours] One message per missed call: the window has closed; the next press rings.
        #expect(engine.messageWindowCallId == nil)
        let again = engine.handle(.local(.press(DoorbellPress(sessionId: "visitor3"))), now: t0 + 39_999)
        #expect(again.first == .announcePress(callId: "visitor3"))
    }

    @Test("8.5: after the window (15 s from the timeout) a press rings again")
    func messageWindowCloses() {
        var engine = ringingDoorbell(messages: true)
        _ = engine.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000)
        #expect(engine.handle(.timerFired(timer(.messageWindow, dev)), now: t0 + 40_000).isEmpty)
        #expect(engine.messageWindowCallId == nil)
        #expect(engine.handle(.local(.press(DoorbellPress(sessionId: "late"))), now: t0 + 40_001).first == .announcePress(callId: "late"))
    }

    @Test("8.5 [ours]: when every user declined, the message window opens too")
    func windowAfterDeclines() {
        var engine = ringingDoorbell(messages: true)
        for user in [u1, u2, u3] { _ = engine.handle(.receivedDoorbell(vd(.stop, user)), now: t0 + 1000) }
        #expect(engine.messageWindowCallId == callId)
    }

    @Test("8.2: messages about the missed call after the timeout get nothing (not the current call)")
    func afterTimeout() {
        var engine = ringingDoorbell(messages: true)
        _ = engine.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000)
        let effects = engine.handle(.receivedDoorbell(vd(.accept, u1)), now: t0 + 25_100)
        #expect(effects == [.refusedDoorbell(vd(.accept, u1), .notCurrentCall(eData: callId))])
        #expect(engine.messageWindowCallId == callId)
    }

    // MARK: 8.2 link timers

    @Test("8.2: link not up within connectTimeout after the accept -> stop connect_failed")
    func connectFailed() {
        var engine = connectedDoorbell(by: u1)
        let effects = engine.handle(.timerFired(timer(.connectTimeout, callId)), now: t0 + 21_000)
        #expect(doorbellSent(effects).map(\.reason) == ["connect_failed"])
        #expect(doorbellSent(effects).map(\.uid) == [u1])
    }

    @Test("8.2: the link up stops connectTimeout; lost for 5 s -> stop disconnected; back in time -> nothing")
    func linkLost() {
        var engine = connectedDoorbell(by: u1)
        #expect(engine.handle(.mediaLinkUp(sessionId: callId), now: t0 + 1500) == [.cancelTimer(timer(.connectTimeout, callId))])
        #expect(engine.handle(.mediaLinkUp(sessionId: "other"), now: t0 + 1500).isEmpty)
        #expect(engine.handle(.mediaLinkDown(sessionId: callId), now: t0 + 5000) == [.armTimer(timer(.mediaLost, callId), at: t0 + 10_000)])
        #expect(engine.handle(.mediaLinkUp(sessionId: callId), now: t0 + 9000) == [.cancelTimer(timer(.mediaLost, callId))])
        _ = engine.handle(.mediaLinkDown(sessionId: callId), now: t0 + 12_000)
        let effects = engine.handle(.timerFired(timer(.mediaLost, callId)), now: t0 + 17_000)
        #expect(doorbellSent(effects).map(\.reason) == ["disconnected"])
        #expect(engine.phase == .idle)
    }

    // MARK: 8.2 refusals

    @Test("8.2: eData not the current call, or a user outside the household: nothing, counted, no change")
    func strangers() {
        var engine = ringingDoorbell()
        let wrongCall = engine.handle(.receivedDoorbell(vd(.accept, u1, "another")), now: t0 + 1000)
        #expect(wrongCall == [.refusedDoorbell(vd(.accept, u1, "another"), .notCurrentCall(eData: "another"))])
        let stranger = engine.handle(.receivedDoorbell(vd(.accept, "mallory")), now: t0 + 1000)
        #expect(stranger == [.refusedDoorbell(vd(.accept, "mallory"), .notInHousehold(userId: "mallory"))])
        let anonymous = engine.handle(.receivedDoorbell(vd(.accept, nil)), now: t0 + 1000)
        #expect(anonymous == [.refusedDoorbell(vd(.accept, nil), .anonymous)])
        let asDevice = engine.handle(.receivedDoorbell(vd(.stop, dev)), now: t0 + 1000)
        #expect(doorbellRefusals(asDevice) == [.notInHousehold(userId: dev)])
        var idle = doorbellEngine()
        #expect(doorbellRefusals(idle.handle(.receivedDoorbell(vd(.heartbeat, u1)), now: t0)) == [.notCurrentCall(eData: callId)])
        #expect(engine.phase == .ringingOutgoing)
        #expect(engine.session?.activePeers == [u1, u2, u3])
    }

    @Test("8.2: answered, timeout and cancel are the device's; from an app they change nothing", arguments: [DoorbellEvent.answered, .timeout, .cancel])
    func deviceOnlyEvents(event: DoorbellEvent) {
        var engine = ringingDoorbell()
        let effects = engine.handle(.receivedDoorbell(vd(event, u1)), now: t0 + 1000)
        #expect(effects == [.refusedDoorbell(vd(event, u1), .unexpectedDoorbell(event: event, phase: .ringingOutgoing))])
        #expect(engine.phase == .ringingOutgoing)
    }

    @Test("8.2: a §3 rtc call for a doorbell kind gets the §3 stop invalid_params; nothing changes")
    func rtcCallToDoorbell() {
        var engine = ringingDoorbell()
        let effects = engine.handle(.received(call(from: u1, to: dev, session: "s1")), now: t0 + 1000)
        #expect(sent(effects) == [CallMessage(event: .stop, curId: dev, targetId: u1, sessionId: "s1", reason: "invalid_params")])
        #expect(engine.session?.sessionId == callId)
        // No curId or sessionId: no one to answer.
        #expect(sent(engine.handle(.received(call(from: "", session: "s1")), now: t0)).isEmpty)
        // Another §3 event: undefined session (never a stop for a stop).
        #expect(sent(engine.handle(.received(msg(.hangUp, u1, dev)), now: t0)).map(\.reason) == ["undefined_session"])
        #expect(sent(engine.handle(.received(msg(.stop, u1, dev)), now: t0)).isEmpty)
    }

    @Test("8.2: a video_doorbell for a screen_ipc device gets a video_doorbell stop invalid_params")
    func doorbellToScreenIPC() {
        var engine = deviceEngine()
        let effects = engine.handle(.receivedDoorbell(vd(.accept, u1)), now: t0)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u1, event: .stop, eData: callId, reason: "invalid_params")])
        #expect(doorbellRefusals(effects).count == 1)
        #expect(engine.phase == .idle)
        // Never a stop for a stop; no uid: no one to answer.
        #expect(doorbellSent(engine.handle(.receivedDoorbell(vd(.stop, u1)), now: t0)).isEmpty)
        #expect(doorbellSent(engine.handle(.receivedDoorbell(vd(.accept, nil)), now: t0)).isEmpty)
    }

    // MARK: 8.2 operator

    @Test("8.2: the operator cancels before an accept -> cancel to everyone; after it, cancel is refused")
    func operatorCancel() throws {
        var engine = ringingDoorbell()
        let effects = try engine.perform(.cancel, now: t0 + 3000)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, event: .cancel, eData: callId)])
        #expect(endedRecord(effects)?.outcome == .cancelled)
        #expect(endedRecord(effects)?.endedBy == .local)
        var connected = connectedDoorbell()
        #expect(throws: CallActionError.wrongPhase(action: "cancel", phase: .answered)) { _ = try connected.perform(.cancel, now: t0) }
    }

    @Test("8.2 [ours]: the operator hangs up after the accept -> stop without a reason to the accepting user")
    func operatorHangUp() throws {
        var engine = connectedDoorbell(by: u3)
        let effects = try engine.perform(.hangUp, now: t0 + 9000)
        #expect(doorbellSent(effects) == [VideoDoorbellMessage(devId: dev, uid: u3, event: .stop, eData: callId)])
        #expect(endedRecord(effects)?.outcome == .hungUp)
        #expect(endedRecord(effects)?.endedBy == .local)
        var ringing = ringingDoorbell()
        #expect(throws: CallActionError.wrongPhase(action: "hang up", phase: .ringingOutgoing)) { _ = try ringing.perform(.hangUp, now: t0) }
        #expect(throws: CallActionError.wrongPhase(action: "answer", phase: .ringingOutgoing)) { _ = try ringing.perform(.answer, now: t0) }
    }

    // MARK: shutdown, stale timers

    @Test("shutdown [ours]: ringing -> cancel shutdown to everyone; connected -> stop shutdown; then everything is refused")
    func shutdown() {
        var ringing = ringingDoorbell()
        let r = ringing.handle(.shutdown, now: t0 + 1000)
        #expect(doorbellSent(r) == [VideoDoorbellMessage(devId: dev, event: .cancel, eData: callId, reason: "shutdown")])
        #expect(endedRecord(r)?.reason == .shutdown)
        #expect(ringing.phase == .shutDown && ringing.armedTimers.isEmpty)
        var connected = connectedDoorbell(by: u2)
        let c = connected.handle(.shutdown, now: t0 + 2000)
        #expect(doorbellSent(c) == [VideoDoorbellMessage(devId: dev, uid: u2, event: .stop, eData: callId, reason: "shutdown")])
        #expect(c.contains(.closeMediaLink(sessionId: callId)))
        #expect(connected.handle(.receivedDoorbell(vd(.heartbeat, u2)), now: t0 + 3000) == [.refusedDoorbell(vd(.heartbeat, u2), .shutDown)])
        #expect(throws: CallActionError.shutDown) { _ = try connected.perform(.press(DoorbellPress(sessionId: "x")), now: t0) }
        #expect(connected.handle(.shutdown, now: t0 + 3000).isEmpty)
        var window = ringingDoorbell(messages: true)
        _ = window.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000)
        #expect(window.handle(.shutdown, now: t0 + 26_000) == [.cancelTimer(timer(.messageWindow, dev))])
    }

    @Test("a stale or foreign timer changes nothing")
    func staleTimers() {
        var engine = connectedDoorbell(by: u1)
        #expect(engine.handle(.timerFired(timer(.ringTimeout, callId)), now: t0 + 25_000).isEmpty)
        #expect(engine.handle(.timerFired(timer(.heartbeatWatchdog, "old")), now: t0 + 25_000).isEmpty)
        #expect(engine.handle(.timerFired(timer(.sleepAfter, dev)), now: t0 + 25_000).isEmpty)
        #expect(engine.phase == .answered)
    }

    // MARK: DeviceSideEngine

    @Test("DeviceSideEngine passes through to either kind")
    func deviceSide() throws {
        var doorbell = DeviceSideEngine(doorbell: DoorbellEngineConfig(devId: dev, household: [u1]))
        #expect(doorbell.isDoorbell && doorbell.devId == dev)
        _ = try doorbell.perform(.press(DoorbellPress(sessionId: callId)), now: t0)
        _ = doorbell.handle(.receivedDoorbell(vd(.accept, u1)), now: t0 + 10)
        #expect(doorbell.phase == .answered)
        #expect(doorbell.answeredCall == AnsweredCall(sessionId: callId, peer: u1))
        #expect(doorbell.session?.sessionId == callId)
        _ = try doorbell.perform(.setActingBusy(true), now: t0)
        _ = try doorbell.perform(.setAnswerPolicy(.reject), now: t0)
        #expect(doorbell.isActingBusy && doorbell.answerPolicy == .reject)
        #expect(doorbell.armedTimers.count == 2)

        var screen = DeviceSideEngine(screenIPC: DeviceEngineConfig(devId: dev, answerPolicy: .answerAfter(ms: 0)))
        #expect(!screen.isDoorbell)
        _ = screen.handle(.received(call()), now: t0)
        #expect(screen.phase == .answered)
        #expect(screen.answeredCall == AnsweredCall(sessionId: "s1", peer: u1))
        #expect(screen.answerPolicy == .answerAfter(ms: 0))
    }

    @Test("3.5: a stop answered_by_other maps to -2522 answered by others")
    func answeredByOtherMapping() {
        #expect(SDKError.forStop(reason: "answered_by_other") == .answeredByOthers)
        #expect(StopReason(rawValue: "answered_by_other") == .answeredByOther)
    }
}
