import Testing
import IPCWire
@testable import CallEngine

/// The app role (the SDK side): startCall, heartbeats, deadlines, listen mode.
@Suite("App role")
struct AppRoleTests {
    private let start = StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: 25, callType: .oneToOne,
                                  extra: CallExtra(category: "sp_dpsxj"))

    /// An app whose call "a1" to the device rings since t0.
    private func calling() -> AppCallEngine {
        var a = appEngine()
        _ = try? a.perform(.startCall(start), now: t0)
        return a
    }

    /// An app whose call "a1" the device answered at t0 + 2000.
    private func answered() -> AppCallEngine {
        var a = calling()
        _ = a.receive(msg(.answer, dev, u1, "a1"), now: t0 + 2000)
        return a
    }

    @Test("startCall sends one call with the deadline in ms and arms deadline + grace")
    func startCallSendsCall() throws {
        var a = appEngine()
        #expect(!a.isOnCalling)
        let effects = try a.perform(.startCall(start), now: t0)
        #expect(effects == [
            .send(CallMessage(event: .call, curId: u1, targetId: dev, sessionId: "a1", timeout: t0 + 25_000,
                              callType: .oneToOne, extra: CallExtra(category: "sp_dpsxj"))),
            .armTimer(timer(.callDeadline, "a1"), at: t0 + 27_000),
        ])
        #expect(a.isOnCalling)
        #expect(a.phase == .ringingOutgoing)
    }

    @Test("startCall while on a call: -2520 onCalling, nothing sent")
    func startCallWhileOnCall() {
        var a = calling()
        #expect(throws: CallActionError.onCalling(sessionId: "a1")) {
            try a.perform(.startCall(StartCall(targetId: "dev2", sessionId: "a2")), now: t0 + 10)
        }
        #expect(CallActionError.onCalling(sessionId: "a1").sdkError == .onCalling)
        let effects = a.handle(.local(.startCall(StartCall(targetId: "dev2", sessionId: "a2"))), now: t0 + 10)
        #expect(sent(effects).isEmpty)
        #expect(a.session?.sessionId == "a1")
    }

    @Test("startCall with a non-positive timeout is invalid params")
    func startCallBadTimeout() {
        var a = appEngine()
        #expect(throws: CallActionError.invalidArgument("timeout 0 s is not positive")) {
            try a.perform(.startCall(StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: 0)), now: t0)
        }
        #expect(!a.isOnCalling)
    }

    @Test("ring from the device is reported, no reply")
    func ringReported() {
        var a = calling()
        #expect(a.receive(msg(.ring, dev, u1, "a1"), now: t0 + 50) == [.peerRinging(sessionId: "a1", peer: dev)])
        #expect(a.session?.peersRinging == [dev])
    }

    @Test("answer: the app expects the link and starts its heartbeats")
    func answerStartsHeartbeats() {
        var a = calling()
        let effects = a.receive(msg(.answer, dev, u1, "a1"), now: t0 + 2000)
        #expect(effects == [
            .expectMediaLink(sessionId: "a1", peer: dev),
            .cancelTimer(timer(.callDeadline, "a1")),
            .armTimer(timer(.heartbeatSend, "a1"), at: t0 + 12_000),
            .armTimer(timer(.heartbeatWatchdog, "a1"), at: t0 + 32_000),
        ])
        #expect(a.answeredCall == AnsweredCall(sessionId: "a1", peer: dev))
    }

    @Test("the app sends a heartbeat every heartbeatInterval")
    func heartbeatEveryInterval() {
        var a = answered()
        var now = t0 + 2000
        for _ in 1...3 {
            now += 10_000
            let effects = a.timerFired(timer(.heartbeatSend, "a1"), now: now)
            #expect(effects == [.send(msg(.heartbeat, u1, dev, "a1")), .armTimer(timer(.heartbeatSend, "a1"), at: now + 10_000)])
            // The device's reply restarts the watchdog; the app does not answer it.
            #expect(a.receive(msg(.heartbeat, dev, u1, "a1"), now: now + 5) ==
                    [.armTimer(timer(.heartbeatWatchdog, "a1"), at: now + 5 + 30_000)])
        }
    }

    @Test("no heartbeat reply for heartbeatTimeout: stop heartbeat_timeout, ends with -2532")
    func heartbeatWatchdog() {
        var a = answered()
        let effects = a.timerFired(timer(.heartbeatWatchdog, "a1"), now: t0 + 32_000)
        #expect(withoutRecord(effects) == [
            .send(msg(.stop, u1, dev, "a1", reason: .heartbeatTimeout)),
            .closeMediaLink(sessionId: "a1"),
            .cancelTimer(timer(.heartbeatSend, "a1")),
        ])
        #expect(endedRecord(effects)?.sdkError == .disconnect)
        #expect(endedRecord(effects)?.sdkError?.rawValue == -2532)
        #expect(!a.isOnCalling)
    }

    @Test("own deadline (+ grace) with no answer: sends timeout, ends with -2530")
    func ownDeadline() {
        var a = calling()
        let effects = a.timerFired(timer(.callDeadline, "a1"), now: t0 + 27_000)
        #expect(sent(effects) == [msg(.timeout, u1, dev, "a1")])
        #expect(endedRecord(effects)?.sdkError == .timeout)
        #expect(endedRecord(effects)?.outcome == .notAnswered)
    }

    @Test("the device's not_answered within the grace wins: -2512, the app's timer is then stale")
    func notAnsweredBeforeGrace() {
        var a = calling()
        let effects = a.receive(msg(.notAnswered, dev, u1, "a1", reason: .timeout), now: t0 + 25_010)
        #expect(sent(effects).isEmpty)
        #expect(endedRecord(effects)?.sdkError == .notAnswered)
        #expect(a.timerFired(timer(.callDeadline, "a1"), now: t0 + 27_000) == [])
    }

    @Test("own hang-up: hang_up sent, no SDK error")
    func ownHangUp() throws {
        var a = answered()
        let effects = try a.perform(.hangUp, now: t0 + 60_000)
        #expect(sent(effects) == [msg(.hangUp, u1, dev, "a1")])
        #expect(endedRecord(effects)?.sdkError == nil)
        #expect(endedRecord(effects)?.outcome == .hungUp)
    }

    @Test("own cancel before the answer: cancel sent, no SDK error; hang-up before the answer does the same")
    func ownCancel() throws {
        var a = calling()
        let effects = try a.perform(.cancel, now: t0 + 1000)
        #expect(withoutRecord(effects) == [.send(msg(.cancel, u1, dev, "a1")), .cancelTimer(timer(.callDeadline, "a1"))])
        #expect(endedRecord(effects)?.sdkError == nil)
        var b = calling()
        #expect(sent(try b.perform(.hangUp, now: t0 + 1000)) == [msg(.cancel, u1, dev, "a1")])
    }

    @Test("the app never answers a stop, known session or not")
    func neverAnswersStop() {
        var a = appEngine()
        #expect(sent(a.receive(msg(.stop, dev, u1, "zz", reason: .undefinedSession), now: t0)).isEmpty)
        var b = answered()
        #expect(sent(b.receive(msg(.stop, dev, u1, "a1", reason: .connectFailed), now: t0 + 3000)).isEmpty)
    }

    @Test("an event for an unknown session gets stop undefined_session")
    func unknownSession() {
        var a = appEngine()
        let m = msg(.hangUp, dev, u1, "zz")
        #expect(a.receive(m, now: t0) == [.refused(m, .undefinedSession),
                                          .send(msg(.stop, u1, dev, "zz", reason: .undefinedSession))])
        var quiet = AppCallEngine(config: AppEngineConfig(userId: u1, answersUnknownSessions: false))
        #expect(quiet.receive(m, now: t0) == [.refused(m, .undefinedSession)])
    }

    @Test("[ours] a device heartbeat that crossed our hang-up is dropped without a stop; an unknown session still gets one")
    func heartbeatAfterOwnHangUp() throws {
        var a = answered()
        _ = try a.perform(.hangUp, now: t0 + 60_000)
        let late = msg(.heartbeat, dev, u1, "a1")
        #expect(a.receive(late, now: t0 + 60_005) == [.refused(late, .sessionEnded)])
        let stranger = msg(.heartbeat, dev, u1, "zz")
        #expect(sent(a.receive(stranger, now: t0 + 60_010)) == [msg(.stop, u1, dev, "zz", reason: .undefinedSession)])
    }

    @Test("a message addressed to another user is ignored (a device's out topic carries them all)")
    func notAddressedToUs() {
        var a = calling()
        let m = msg(.alreadyAnswered, dev, u2, "a1")
        #expect(a.receive(m, now: t0 + 10) == [.refused(m, .notAddressedToUs(targetId: u2))])
        #expect(a.isOnCalling)
    }

    @Test("listen mode: a device's call rings the app (ring sent) and waits for the user")
    func incomingManual() throws {
        var a = appEngine()
        let c = call(from: dev, to: u1, session: "o1", deadline: t0 + 30_000, callType: .oneToMore)
        let effects = a.receive(c, now: t0)
        #expect(effects == [
            .send(msg(.ring, u1, dev, "o1")),
            .startRinging(sessionId: "o1"),
            .armTimer(timer(.callDeadline, "o1"), at: t0 + 32_000),
        ])
        #expect(a.phase == .ringingIncoming)
        let answer = try a.perform(.answer, now: t0 + 3000)
        #expect(answer == [
            .send(msg(.answer, u1, dev, "o1")),
            .stopRinging(sessionId: "o1"),
            .expectMediaLink(sessionId: "o1", peer: dev),
            .cancelTimer(timer(.callDeadline, "o1")),
            .armTimer(timer(.heartbeatSend, "o1"), at: t0 + 13_000),
            .armTimer(timer(.heartbeatWatchdog, "o1"), at: t0 + 33_000),
        ])
    }

    @Test("listen mode auto policies: answer, reject, busy, ignore", arguments: [
        (AnswerPolicy.answerAfter(ms: 0), [CallEvent.ring, .answer], CallPhase.answered),
        (.reject, [.ring, .reject], .idle),
        (.rejectAfter(ms: 0), [.ring, .reject], .idle),
        (.rejectAfter(ms: 1500), [.ring], .ringingIncoming),
        (.busy, [.ring, .busy], .idle),
        (.ignore, [.ring], .ringingIncoming),
    ])
    func incomingAutoPolicies(policy: AnswerPolicy, events: [CallEvent], phase: CallPhase) {
        var a = appEngine(policy: policy)
        let effects = a.receive(call(from: dev, to: u1, session: "o1"), now: t0)
        #expect(sent(effects).map(\.event) == events)
        #expect(a.phase == phase)
        if let record = endedRecord(effects) { #expect(record.sdkError == nil) }
    }

    @Test("listen mode rejectAfter: the reject goes out when the timer fires")
    func incomingDelayedReject() {
        var a = appEngine(policy: .rejectAfter(ms: 1500))
        let ring = a.receive(call(from: dev, to: u1, session: "o1"), now: t0)
        #expect(ring.contains(.armTimer(timer(.autoReject, "o1"), at: t0 + 1500)))
        let reject = a.timerFired(timer(.autoReject, "o1"), now: t0 + 1500)
        #expect(sent(reject) == [msg(.reject, u1, dev, "o1")])
        #expect(endedRecord(reject)?.outcome == .rejected)
        #expect(a.phase == .idle)
    }

    @Test("listen mode: a device's call while on a call gets busy")
    func incomingWhileOnCall() {
        var a = answered()
        let effects = a.receive(call(from: "dev2", to: u1, session: "o2"), now: t0 + 5000)
        #expect(effects == [.send(msg(.busy, u1, "dev2", "o2", reason: .busy))])
        #expect(a.answeredCall?.sessionId == "a1")
    }

    @Test("listen mode: no ring when configured not to, reject and busy by hand")
    func incomingByHand() throws {
        var a = appEngine(rings: false)
        #expect(sent(a.receive(call(from: dev, to: u1, session: "o1"), now: t0)).isEmpty)
        #expect(sent(try a.perform(.reject, now: t0 + 10)) == [msg(.reject, u1, dev, "o1")])
        _ = a.receive(call(from: dev, to: u1, session: "o2"), now: t0 + 20)
        let busy = try a.perform(.busy, now: t0 + 30)
        #expect(sent(busy) == [msg(.busy, u1, dev, "o2", reason: .busy)])
        #expect(endedRecord(busy)?.sdkError == nil)
    }

    @Test("listen mode: the device's cancel stops the ringing with -2523")
    func incomingCancelled() {
        var a = appEngine()
        _ = a.receive(call(from: dev, to: u1, session: "o1"), now: t0)
        let effects = a.receive(msg(.cancel, dev, u1, "o1"), now: t0 + 1000)
        #expect(withoutRecord(effects) == [.stopRinging(sessionId: "o1"), .cancelTimer(timer(.callDeadline, "o1"))])
        #expect(endedRecord(effects)?.sdkError == .cancelled)
    }

    @Test("listen mode: a bad or expired call from a device is refused like the device refuses")
    func incomingRefused() {
        var a = appEngine()
        #expect(sent(a.receive(call(from: dev, to: u1, session: "o1", extra: nil), now: t0)) ==
                [msg(.stop, u1, dev, "o1", reason: .invalidParams)])
        #expect(sent(a.receive(call(from: dev, to: u1, session: "o1", deadline: t0), now: t0)) ==
                [msg(.stop, u1, dev, "o1", reason: .expired)])
        #expect(!a.isOnCalling)
    }

    @Test("app shutdown: answered call gets hang_up, own ringing call gets cancel; reason shutdown")
    func appShutdown() {
        var a = answered()
        #expect(sent(a.shutdown(now: t0 + 5000)) == [msg(.hangUp, u1, dev, "a1", reason: .shutdown)])
        var b = calling()
        #expect(sent(b.shutdown(now: t0 + 5000)) == [msg(.cancel, u1, dev, "a1", reason: .shutdown)])
        #expect(b.phase == .shutDown)
    }

    @Test("device-only actions are refused in the app role")
    func deviceOnlyActions() {
        var a = appEngine()
        #expect(throws: CallActionError.notInThisRole(action: "press", role: .app)) {
            try a.perform(.press(DoorbellPress(sessionId: "x")), now: t0)
        }
        #expect(throws: CallActionError.wrongPhase(action: "answer", phase: .idle)) { try a.perform(.answer, now: t0) }
    }
}
