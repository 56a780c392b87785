import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.2: the device calls the apps (doorbell press).
@Suite("Device: outgoing call (3.2)")
struct DeviceOutgoingCallTests {
    private let extra = CallExtra(bizType: screenIPCBizType, channelType: 2, category: "sp_dpsxj", keepConnect: false)

    private func outgoingCall(to user: String, _ session: String = "o1", type: CallType, deadline: Int64) -> CallMessage {
        CallMessage(event: .call, curId: dev, targetId: user, sessionId: session, timeout: deadline,
                    callType: type, extra: extra)
    }

    /// A device whose press "o1" of `type` rings at u1, u2, u3 since t0.
    private func pressed(_ type: CallType, targets: [String] = [u1, u2, u3]) -> DeviceCallEngine {
        var d = deviceEngine()
        _ = try? d.perform(.press(DoorbellPress(sessionId: "o1", targets: targets, callType: type)), now: t0)
        return d
    }

    @Test("3.2.1 type 1 with no named target calls exactly the first of the household")
    func type1CallsFirstOfHousehold() throws {
        var d = deviceEngine()
        let effects = try d.perform(.press(DoorbellPress(sessionId: "o1")), now: t0)
        #expect(effects == [
            .send(outgoingCall(to: u1, type: .oneToOne, deadline: t0 + 30_000)),
            .armTimer(timer(.callDeadline, "o1"), at: t0 + 30_000),
        ])
        #expect(d.phase == .ringingOutgoing)
        #expect(d.session?.peers == [u1])
    }

    @Test("3.2.1 type 1 calls exactly the one the press names (the first named)")
    func type1CallsNamedTarget() throws {
        var d = deviceEngine()
        let effects = try d.perform(.press(DoorbellPress(sessionId: "o1", targets: [u3, u2], callType: .oneToOne,
                                                         timeoutMs: 10_000)), now: t0)
        #expect(sent(effects) == [outgoingCall(to: u3, type: .oneToOne, deadline: t0 + 10_000)])
    }

    @Test("3.2.1 one call per target, same sessionId, curId = devId, in order")
    func oneCallPerTarget() throws {
        var d = deviceEngine(defaultCallType: .oneToMore)
        let effects = try d.perform(.press(DoorbellPress(sessionId: "o1")), now: t0)
        #expect(sent(effects) == [u1, u2, u3].map { outgoingCall(to: $0, type: .oneToMore, deadline: t0 + 30_000) })
        #expect(d.session?.activePeers == [u1, u2, u3])
    }

    @Test("a press while in a session, or with no target, is refused with a typed error")
    func pressRefusals() {
        var d = ringingDevice()
        #expect(throws: CallActionError.onCalling(sessionId: "s1")) {
            try d.perform(.press(DoorbellPress(sessionId: "o1")), now: t0)
        }
        var lonely = deviceEngine(household: [])
        #expect(throws: CallActionError.noTargets) { try lonely.perform(.press(DoorbellPress(sessionId: "o1")), now: t0) }
        #expect(throws: CallActionError.invalidArgument("empty session id")) {
            try lonely.perform(.press(DoorbellPress(sessionId: "", targets: [u1])), now: t0)
        }
        #expect(lonely.phase == .idle)
    }

    @Test("3.2.2 ring from a target: noted, no reply")
    func ringFromApp() {
        var d = pressed(.oneToMore)
        let effects = d.receive(msg(.ring, u2, dev, "o1"), now: t0 + 100)
        #expect(effects == [.peerRinging(sessionId: "o1", peer: u2)])
        #expect(d.session?.peersRinging == [u2])
    }

    @Test("3.2.2 type 1 answer: the call is answered by that app; P2P link expected from it")
    func type1Answer() {
        var d = pressed(.oneToOne)
        let effects = d.receive(msg(.answer, u1, dev, "o1"), now: t0 + 4000)
        #expect(effects == [
            .expectMediaLink(sessionId: "o1", peer: u1),
            .cancelTimer(timer(.callDeadline, "o1")),
            .armTimer(timer(.connectTimeout, "o1"), at: t0 + 24_000),
            .armTimer(timer(.heartbeatWatchdog, "o1"), at: t0 + 34_000),
        ])
        #expect(d.answeredCall == AnsweredCall(sessionId: "o1", peer: u1))
        #expect(d.session?.answeredBy == u1)
    }

    @Test("3.2.3 type 1: reject ends the call (rejected)")
    func type1Reject() {
        var d = pressed(.oneToOne)
        let effects = d.receive(msg(.reject, u1, dev, "o1"), now: t0 + 100)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.outcome == .rejected)
        #expect(endedRecord(effects)?.reason == .rejected)
        #expect(d.phase == .idle)
    }

    @Test("3.2.3 type 1: busy ends the call (busy)")
    func type1Busy() {
        var d = pressed(.oneToOne)
        let effects = d.receive(msg(.busy, u1, dev, "o1"), now: t0 + 100)
        #expect(endedRecord(effects)?.outcome == .busy)
        #expect(endedRecord(effects)?.reason == .busy)
        #expect(d.phase == .idle)
    }

    @Test("3.2.3 type 2: the first answer wins, every other target gets already_answered")
    func type2FirstAnswerWins() {
        var d = pressed(.oneToMore)
        let effects = d.receive(msg(.answer, u2, dev, "o1"), now: t0 + 100)
        #expect(sent(effects) == [msg(.alreadyAnswered, dev, u1, "o1"), msg(.alreadyAnswered, dev, u3, "o1")])
        #expect(d.answeredCall?.peer == u2)
        // A late answer from a target that lost is logged, not answered.
        let late = msg(.answer, u3, dev, "o1")
        #expect(d.receive(late, now: t0 + 110) == [.refused(late, .leftSession(userId: u3))])
        #expect(d.answeredCall?.peer == u2)
    }

    @Test("3.2.3 type 2: a reject ends the call, every other target gets already_rejected")
    func type2RejectEndsCall() {
        var d = pressed(.oneToMore)
        let effects = d.receive(msg(.reject, u1, dev, "o1"), now: t0 + 100)
        #expect(sent(effects) == [msg(.alreadyRejected, dev, u2, "o1", reason: .rejected),
                                  msg(.alreadyRejected, dev, u3, "o1", reason: .rejected)])
        #expect(endedRecord(effects)?.outcome == .rejected)
        #expect(d.phase == .idle)
    }

    @Test("3.2.3 type 2: busy removes only that target")
    func type2BusyRemovesOnlyThatTarget() {
        var d = pressed(.oneToMore)
        #expect(d.receive(msg(.busy, u1, dev, "o1"), now: t0 + 100) == [])
        #expect(d.session?.activePeers == [u2, u3])
        // The already_rejected of a later reject goes only to the targets still in the call.
        let effects = d.receive(msg(.reject, u2, dev, "o1"), now: t0 + 200)
        #expect(sent(effects) == [msg(.alreadyRejected, dev, u3, "o1", reason: .rejected)])
    }

    @Test("3.2.3 every target busy: the call ends with reason busy")
    func allBusy() {
        var d = pressed(.oneToMore)
        _ = d.receive(msg(.busy, u1, dev, "o1"), now: t0 + 100)
        _ = d.receive(msg(.busy, u2, dev, "o1"), now: t0 + 100)
        let effects = d.receive(msg(.busy, u3, dev, "o1"), now: t0 + 100)
        #expect(endedRecord(effects)?.outcome == .busy)
        #expect(endedRecord(effects)?.reason == .busy)
        #expect(withoutRecord(effects) == [.cancelTimer(timer(.callDeadline, "o1"))])
    }

    @Test("3.2.3 type 3: a reject removes only that target")
    func type3RejectRemovesOnlyThatTarget() {
        var d = pressed(.oneToMoreSpecial)
        #expect(d.receive(msg(.reject, u1, dev, "o1"), now: t0 + 100) == [])
        #expect(d.phase == .ringingOutgoing)
        #expect(d.session?.activePeers == [u2, u3])
    }

    @Test("3.2.3 type 3: every target rejected or busy: the call ends as rejected")
    func type3AllGoneEndsRejected() {
        var d = pressed(.oneToMoreSpecial)
        _ = d.receive(msg(.reject, u1, dev, "o1"), now: t0 + 100)
        _ = d.receive(msg(.busy, u2, dev, "o1"), now: t0 + 100)
        let effects = d.receive(msg(.reject, u3, dev, "o1"), now: t0 + 100)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.outcome == .rejected)
        #expect(endedRecord(effects)?.reason == .rejected)
    }

    @Test("3.2.3 type 3: the first answer wins; already_answered only to targets still in the call")
    func type3FirstAnswerWins() {
        var d = pressed(.oneToMoreSpecial)
        _ = d.receive(msg(.reject, u1, dev, "o1"), now: t0 + 100)
        let effects = d.receive(msg(.answer, u3, dev, "o1"), now: t0 + 200)
        #expect(sent(effects) == [msg(.alreadyAnswered, dev, u2, "o1")])
        #expect(d.answeredCall == AnsweredCall(sessionId: "o1", peer: u3))
    }

    @Test("3.2.4 deadline: not_answered to every target still ringing, reason timeout")
    func outgoingDeadline() {
        var d = pressed(.oneToMoreSpecial)
        _ = d.receive(msg(.busy, u2, dev, "o1"), now: t0 + 100)
        let effects = d.timerFired(timer(.callDeadline, "o1"), now: t0 + 30_000)
        #expect(sent(effects) == [msg(.notAnswered, dev, u1, "o1", reason: .timeout),
                                  msg(.notAnswered, dev, u3, "o1", reason: .timeout)])
        #expect(endedRecord(effects)?.reason == .timeout)
        #expect(endedRecord(effects)?.outcome == .notAnswered)
        #expect(endedRecord(effects)?.direction == .outgoing)
        #expect(endedRecord(effects)?.peers == [u1, u2, u3])
    }

    @Test("3.2.5 the device cancels before an answer: cancel to every target")
    func deviceCancels() throws {
        var d = pressed(.oneToMore)
        let effects = try d.perform(.cancel, now: t0 + 1000)
        #expect(withoutRecord(effects) == [
            .send(msg(.cancel, dev, u1, "o1")), .send(msg(.cancel, dev, u2, "o1")), .send(msg(.cancel, dev, u3, "o1")),
            .cancelTimer(timer(.callDeadline, "o1")),
        ])
        #expect(endedRecord(effects)?.outcome == .cancelled)
        #expect(throws: CallActionError.wrongPhase(action: "cancel", phase: .idle)) { try d.perform(.cancel, now: t0) }
    }

    @Test("3.4 a stranger answering the device's call gets stop undefined_session")
    func strangerAnswers() {
        var d = pressed(.oneToMore)
        let effects = d.receive(msg(.answer, "mallory", dev, "o1"), now: t0 + 10)
        #expect(sent(effects) == [msg(.stop, dev, "mallory", "o1", reason: .undefinedSession)])
        #expect(d.phase == .ringingOutgoing)
    }

    @Test("a target that left (busy) and answers later is logged, not let in")
    func formerTargetCannotAnswer() {
        var d = pressed(.oneToMore)
        _ = d.receive(msg(.busy, u1, dev, "o1"), now: t0 + 10)
        let late = msg(.answer, u1, dev, "o1")
        #expect(d.receive(late, now: t0 + 20) == [.refused(late, .leftSession(userId: u1))])
        #expect(d.phase == .ringingOutgoing)
    }

    @Test("stop from the only target ends the outgoing call; from one of several ends only its leg")
    func stopDuringOutgoingRing() {
        var multi = pressed(.oneToMore)
        #expect(multi.receive(msg(.stop, u1, dev, "o1", reason: .undefinedSession), now: t0 + 10) == [])
        #expect(multi.session?.activePeers == [u2, u3])
        var single = pressed(.oneToOne)
        let effects = single.receive(msg(.stop, u1, dev, "o1", reason: .invalidParams), now: t0 + 10)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.outcome == .stopped)
        #expect(endedRecord(effects)?.reason == .invalidParams)
    }
}
