import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.1: the app calls the device.
@Suite("Device: incoming call (3.1)")
struct DeviceIncomingCallTests {
    @Test("3.1.3 a valid call rings at once: ring sent, bell on, deadline armed")
    func validCallRingsAtOnce() {
        var d = deviceEngine()
        let effects = d.receive(call(), now: t0)
        #expect(effects == [
            .send(msg(.ring, dev, u1)),
            .startRinging(sessionId: "s1"),
            .armTimer(timer(.callDeadline), at: t0 + 30_000),
        ])
        #expect(d.phase == .ringingIncoming)
        #expect(d.session?.sessionId == "s1")
        #expect(d.session?.peers == [u1])
        #expect(d.session?.deadline == t0 + 30_000)
        #expect(d.session?.direction == .incoming)
    }

    @Test("3.1.3 policy answerAfter arms a timer; when it fires the device answers")
    func answerAfterPolicy() {
        var d = deviceEngine(policy: .answerAfter(ms: 3000))
        let ring = d.receive(call(), now: t0)
        #expect(ring.last == .armTimer(timer(.autoAnswer), at: t0 + 3000))
        let answer = d.timerFired(timer(.autoAnswer), now: t0 + 3000)
        #expect(answer == [
            .send(msg(.answer, dev, u1)),
            .stopRinging(sessionId: "s1"),
            .expectMediaLink(sessionId: "s1", peer: u1),
            .cancelTimer(timer(.callDeadline)),
            .armTimer(timer(.connectTimeout), at: t0 + 3000 + 20_000),
            .armTimer(timer(.heartbeatWatchdog), at: t0 + 3000 + 30_000),
        ])
        #expect(d.phase == .answered)
        #expect(d.session?.answeredBy == dev)
        #expect(d.session?.answeredAt == t0 + 3000)
    }

    @Test("3.1.3 policy answerAfter 0 answers in the same step as the ring")
    func answerAtOnce() {
        var d = deviceEngine(policy: .answerAfter(ms: 0))
        let effects = d.receive(call(), now: t0)
        #expect(sent(effects) == [msg(.ring, dev, u1), msg(.answer, dev, u1)])
        #expect(d.phase == .answered)
    }

    @Test("3.1.3 policy reject: ring, then reject; the session ends")
    func rejectPolicy() {
        var d = deviceEngine(policy: .reject)
        let effects = d.receive(call(), now: t0)
        #expect(withoutRecord(effects) == [
            .send(msg(.ring, dev, u1)),
            .startRinging(sessionId: "s1"),
            .armTimer(timer(.callDeadline), at: t0 + 30_000),
            .send(msg(.reject, dev, u1)),
            .stopRinging(sessionId: "s1"),
            .cancelTimer(timer(.callDeadline)),
        ])
        #expect(endedRecord(effects)?.outcome == .rejected)
        #expect(endedRecord(effects)?.endedBy == .local)
        #expect(d.phase == .idle)
    }

    @Test("3.1.3 policy rejectAfter: ring, a timer; when it fires the device rejects and the session ends")
    func rejectAfterPolicy() {
        var d = deviceEngine(policy: .rejectAfter(ms: 2000))
        let ring = d.receive(call(), now: t0)
        #expect(ring == [
            .send(msg(.ring, dev, u1)),
            .startRinging(sessionId: "s1"),
            .armTimer(timer(.callDeadline), at: t0 + 30_000),
            .armTimer(timer(.autoReject), at: t0 + 2000),
        ])
        #expect(d.phase == .ringingIncoming)
        let reject = d.timerFired(timer(.autoReject), now: t0 + 2000)
        #expect(withoutRecord(reject) == [
            .send(msg(.reject, dev, u1)),
            .stopRinging(sessionId: "s1"),
            .cancelTimer(timer(.callDeadline)),
        ])
        #expect(endedRecord(reject)?.outcome == .rejected)
        #expect(endedRecord(reject)?.endedBy == .local)
        #expect(d.phase == .idle)
    }

    @Test("3.1.3 policy rejectAfter 0 rejects in the same step as the ring, as reject does")
    func rejectAfterZeroIsReject() {
        var d = deviceEngine(policy: .rejectAfter(ms: 0))
        let effects = d.receive(call(), now: t0)
        #expect(sent(effects) == [msg(.ring, dev, u1), msg(.reject, dev, u1)])
        #expect(d.phase == .idle)
    }

    @Test("3.1.4 a cancel before a delayed reject fires: the reject timer is cancelled and stale afterwards")
    func cancelBeforeDelayedReject() {
        var d = deviceEngine(policy: .rejectAfter(ms: 2000))
        _ = d.receive(call(), now: t0)
        let cancel = d.receive(msg(.cancel, u1, dev), now: t0 + 500)
        #expect(withoutRecord(cancel).contains(.cancelTimer(timer(.autoReject))))
        #expect(endedRecord(cancel)?.outcome == .cancelled)
        #expect(d.timerFired(timer(.autoReject), now: t0 + 2000) == [])
        #expect(d.phase == .idle)
    }

    @Test("3.1.3 the operator answers while a delayed reject is pending: answered, the reject never comes")
    func operatorAnswersBeforeDelayedReject() throws {
        var d = deviceEngine(policy: .rejectAfter(ms: 2000))
        _ = d.receive(call(), now: t0)
        let answer = try d.perform(.answer, now: t0 + 1000)
        #expect(sent(answer) == [msg(.answer, dev, u1)])
        #expect(answer.contains(.cancelTimer(timer(.autoReject))))
        #expect(d.timerFired(timer(.autoReject), now: t0 + 2000) == [])
        #expect(d.phase == .answered)
    }

    @Test("3.1.3 policy busy: ring, then busy (reason busy); the session ends")
    func busyPolicy() {
        var d = deviceEngine(policy: .busy)
        let effects = d.receive(call(), now: t0)
        #expect(sent(effects) == [msg(.ring, dev, u1), msg(.busy, dev, u1, reason: .busy)])
        #expect(endedRecord(effects)?.outcome == .busy)
        #expect(endedRecord(effects)?.reason == .busy)
        #expect(d.phase == .idle)
    }

    @Test("3.1.3 policy ignore stays silent; 3.1.5 at the deadline not_answered, reason timeout")
    func ignorePolicyThenDeadline() {
        var d = deviceEngine(policy: .ignore)
        let ring = d.receive(call(), now: t0)
        #expect(sent(ring) == [msg(.ring, dev, u1)])
        let end = d.timerFired(timer(.callDeadline), now: t0 + 30_000)
        #expect(withoutRecord(end) == [
            .send(msg(.notAnswered, dev, u1, reason: .timeout)),
            .stopRinging(sessionId: "s1"),
        ])
        let record = endedRecord(end)
        #expect(record?.outcome == .notAnswered)
        #expect(record?.reason == .timeout)
        #expect(record?.endedAt == t0 + 30_000)
        #expect(d.phase == .idle)
    }

    @Test("3.1.3 policy manual waits: nothing after the ring until the operator answers")
    func manualPolicyWaitsForOperator() throws {
        var d = ringingDevice()
        #expect(d.timerFired(timer(.autoAnswer), now: t0 + 5000) == [])
        #expect(d.phase == .ringingIncoming)
        let effects = try d.perform(.answer, now: t0 + 6000)
        #expect(sent(effects) == [msg(.answer, dev, u1)])
        #expect(d.answeredCall == AnsweredCall(sessionId: "s1", peer: u1))
    }

    @Test("3.1.4 operator reject sends reject and ends the session")
    func operatorRejects() throws {
        var d = ringingDevice()
        let effects = try d.perform(.reject, now: t0 + 2000)
        #expect(withoutRecord(effects) == [
            .send(msg(.reject, dev, u1)),
            .stopRinging(sessionId: "s1"),
            .cancelTimer(timer(.callDeadline)),
        ])
        #expect(endedRecord(effects)?.outcome == .rejected)
    }

    @Test("operator busy on a ringing call sends busy (reason busy)")
    func operatorBusy() throws {
        var d = ringingDevice()
        let effects = try d.perform(.busy, now: t0 + 2000)
        #expect(sent(effects) == [msg(.busy, dev, u1, reason: .busy)])
        #expect(endedRecord(effects)?.outcome == .busy)
    }

    @Test("3.1.4 app cancel while ringing stops the ringing, no reply")
    func cancelStopsRinging() {
        var d = ringingDevice()
        let effects = d.receive(msg(.cancel, u1, dev), now: t0 + 2000)
        #expect(withoutRecord(effects) == [.stopRinging(sessionId: "s1"), .cancelTimer(timer(.callDeadline))])
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.outcome == .cancelled)
        #expect(endedRecord(effects)?.endedBy == .remote)
        #expect(d.phase == .idle)
    }

    @Test("3.1.4 app timeout while ringing: same as cancel, the session ends with reason timeout")
    func appTimeoutEndsWithReasonTimeout() {
        var d = ringingDevice()
        let effects = d.receive(msg(.timeout, u1, dev), now: t0 + 30_000)
        #expect(withoutRecord(effects) == [.stopRinging(sessionId: "s1"), .cancelTimer(timer(.callDeadline))])
        #expect(endedRecord(effects)?.reason == .timeout)
        #expect(endedRecord(effects)?.outcome == .notAnswered)
        #expect(d.phase == .idle)
    }

    @Test("3.1.4 the device never sends timeout: its own deadline sends not_answered")
    func deviceNeverSendsTimeout() {
        var d = ringingDevice(policy: .ignore)
        let effects = d.timerFired(timer(.callDeadline), now: t0 + 30_000)
        #expect(!sent(effects).contains { $0.event == .timeout })
        #expect(sent(effects).map(\.event) == [.notAnswered])
    }

    @Test("3.1.2 a valid call while in another session gets busy and nothing else changes")
    func busyWhileRinging() {
        var d = ringingDevice()
        let effects = d.receive(call(from: u2, session: "s2"), now: t0 + 1000)
        #expect(effects == [.send(msg(.busy, dev, u2, "s2", reason: .busy))])
        #expect(d.session?.sessionId == "s1")
        #expect(d.session?.peers == [u1])
        #expect(d.phase == .ringingIncoming)
        #expect(d.armedTimers.map(\.timer) == [timer(.callDeadline)])
    }

    @Test("3.1.2 busy also while answered")
    func busyWhileAnswered() {
        var d = answeredIncomingDevice()
        let effects = d.receive(call(from: u2, session: "s2", deadline: t0 + 60_000), now: t0 + 5000)
        #expect(effects == [.send(msg(.busy, dev, u2, "s2", reason: .busy))])
        #expect(d.answeredCall == AnsweredCall(sessionId: "s1", peer: u1))
    }

    @Test("3.1.2 busy also while the device's own call rings")
    func busyWhileOutgoing() throws {
        var d = deviceEngine()
        _ = try d.perform(.press(DoorbellPress(sessionId: "out1")), now: t0)
        let effects = d.receive(call(from: u3, session: "s9"), now: t0 + 10)
        #expect(effects == [.send(msg(.busy, dev, u3, "s9", reason: .busy))])
        #expect(d.phase == .ringingOutgoing)
    }

    @Test("3.1.2 a repeated call while ringing gets ring again, nothing else")
    func repeatedCallWhileRinging() {
        var d = ringingDevice()
        let effects = d.receive(call(), now: t0 + 500)
        #expect(effects == [.send(msg(.ring, dev, u1))])
        #expect(d.phase == .ringingIncoming)
    }

    @Test("3.1.2 a repeated call once answered gets answer again, nothing else")
    func repeatedCallOnceAnswered() {
        var d = answeredIncomingDevice()
        let timersBefore = d.armedTimers.map(\.timer)
        let effects = d.receive(call(), now: t0 + 1500)
        #expect(effects == [.send(msg(.answer, dev, u1))])
        #expect(d.phase == .answered)
        #expect(d.armedTimers.map(\.timer) == timersBefore)
    }

    @Test("3.1.7 hang_up from the app ends the answered call; no reply")
    func appHangsUp() {
        var d = answeredIncomingDevice()
        let effects = d.receive(msg(.hangUp, u1, dev), now: t0 + 60_000)
        #expect(withoutRecord(effects) == [
            .closeMediaLink(sessionId: "s1"),
            .cancelTimer(timer(.connectTimeout)),
            .cancelTimer(timer(.heartbeatWatchdog)),
        ])
        let record = endedRecord(effects)
        #expect(record?.outcome == .hungUp)
        #expect(record?.endedBy == .remote)
        #expect(record?.answeredBy == dev)
        #expect(record?.answeredAt == t0 + 1000)
        #expect(d.phase == .idle)
    }

    @Test("3.1.7 the operator hangs up: hang_up to the app")
    func deviceHangsUp() throws {
        var d = answeredIncomingDevice()
        let effects = try d.perform(.hangUp, now: t0 + 9000)
        #expect(sent(effects) == [msg(.hangUp, dev, u1)])
        #expect(endedRecord(effects)?.endedBy == .local)
        #expect(d.phase == .idle)
    }

    @Test("3.1.6 after answer the app may open the P2P link: the query names session and caller")
    func answeredCallQuery() {
        var d = ringingDevice()
        #expect(d.answeredCall == nil)
        _ = try? d.perform(.answer, now: t0 + 10)
        #expect(d.answeredCall == AnsweredCall(sessionId: "s1", peer: u1))
    }

    @Test("act busy (fault injection): a valid call gets busy even when idle")
    func actingBusy() throws {
        var d = deviceEngine()
        _ = try d.perform(.setActingBusy(true), now: t0)
        #expect(d.receive(call(), now: t0) == [.send(msg(.busy, dev, u1, reason: .busy))])
        #expect(d.phase == .idle)
        _ = try d.perform(.setActingBusy(false), now: t0)
        #expect(sent(d.receive(call(), now: t0)) == [msg(.ring, dev, u1)])
    }

    @Test("a new call after a session ended rings again")
    func newCallAfterEnd() {
        var d = ringingDevice()
        _ = d.receive(msg(.cancel, u1, dev), now: t0 + 10)
        let effects = d.receive(call(from: u2, session: "s2"), now: t0 + 20)
        #expect(sent(effects) == [msg(.ring, dev, u2, "s2")])
    }
}
