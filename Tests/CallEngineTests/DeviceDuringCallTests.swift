import Testing
import IPCWire
@testable import CallEngine

/// PROTOCOL.md 3.3: during a call (device side).
@Suite("Device: during a call (3.3)")
struct DeviceDuringCallTests {
    @Test("each app heartbeat gets exactly one heartbeat back and restarts the watchdog")
    func heartbeatIsAnsweredOnce() {
        var d = answeredIncomingDevice()
        let effects = d.receive(msg(.heartbeat, u1, dev), now: t0 + 11_000)
        #expect(effects == [
            .send(msg(.heartbeat, dev, u1)),
            .armTimer(timer(.heartbeatWatchdog), at: t0 + 41_000),
        ])
    }

    @Test("the device never sends a heartbeat on its own: no timer of its own sends one")
    func noHeartbeatOfItsOwn() {
        var d = answeredIncomingDevice()
        _ = d.mediaLinkUp(sessionId: "s1", now: t0 + 1500)
        #expect(!d.armedTimers.contains { $0.timer.kind == .heartbeatSend })
        var everything: [CallEffect] = []
        // Two minutes of app heartbeats every 10 s: exactly one reply each, nothing else sent.
        for k in 1...12 {
            everything += d.receive(msg(.heartbeat, u1, dev), now: t0 + 1000 + Int64(k) * 10_000)
        }
        #expect(sent(everything).count == 12)
        #expect(sent(everything).allSatisfy { $0 == msg(.heartbeat, dev, u1) })
        #expect(d.phase == .answered)
    }

    @Test("no heartbeat for heartbeatTimeout: stop heartbeat_timeout")
    func heartbeatTimeout() {
        var d = answeredIncomingDevice()
        _ = d.mediaLinkUp(sessionId: "s1", now: t0 + 1500)
        _ = d.receive(msg(.heartbeat, u1, dev), now: t0 + 11_000)
        // The first arming (t0 + 31 000) was replaced; firing it now would be stale.
        #expect(d.armedTimers.first { $0.timer.kind == .heartbeatWatchdog }?.at == t0 + 41_000)
        let effects = d.timerFired(timer(.heartbeatWatchdog), now: t0 + 41_000)
        #expect(withoutRecord(effects) == [
            .send(msg(.stop, dev, u1, reason: .heartbeatTimeout)),
            .closeMediaLink(sessionId: "s1"),
        ])
        #expect(endedRecord(effects)?.outcome == .stopped)
        #expect(endedRecord(effects)?.reason == .heartbeatTimeout)
        #expect(d.phase == .idle)
    }

    @Test("media link not up within connectTimeout after answer: stop connect_failed")
    func connectTimeout() {
        var d = answeredIncomingDevice()
        let effects = d.timerFired(timer(.connectTimeout), now: t0 + 21_000)
        #expect(withoutRecord(effects) == [
            .send(msg(.stop, dev, u1, reason: .connectFailed)),
            .closeMediaLink(sessionId: "s1"),
            .cancelTimer(timer(.heartbeatWatchdog)),
        ])
        #expect(endedRecord(effects)?.reason == .connectFailed)
    }

    @Test("media link up in time cancels connectTimeout; a late firing is stale and ignored")
    func mediaUpInTime() {
        var d = answeredIncomingDevice()
        #expect(d.mediaLinkUp(sessionId: "s1", now: t0 + 3000) == [.cancelTimer(timer(.connectTimeout))])
        #expect(d.session?.mediaLink == .up)
        #expect(d.timerFired(timer(.connectTimeout), now: t0 + 21_000) == [])
        #expect(d.phase == .answered)
    }

    @Test("media link lost and back within 5 s: the call goes on")
    func mediaBackWithinGrace() {
        var d = answeredIncomingDevice()
        _ = d.mediaLinkUp(sessionId: "s1", now: t0 + 3000)
        #expect(d.mediaLinkDown(sessionId: "s1", now: t0 + 10_000) == [.armTimer(timer(.mediaLost), at: t0 + 15_000)])
        #expect(d.session?.mediaLink == .lost(since: t0 + 10_000))
        #expect(d.mediaLinkUp(sessionId: "s1", now: t0 + 14_000) == [.cancelTimer(timer(.mediaLost))])
        #expect(d.timerFired(timer(.mediaLost), now: t0 + 15_000) == [])
        #expect(d.phase == .answered)
    }

    @Test("media link lost and not back within 5 s: stop disconnected")
    func mediaLost() {
        var d = answeredIncomingDevice()
        _ = d.mediaLinkUp(sessionId: "s1", now: t0 + 3000)
        _ = d.mediaLinkDown(sessionId: "s1", now: t0 + 10_000)
        let effects = d.timerFired(timer(.mediaLost), now: t0 + 15_000)
        #expect(sent(effects) == [msg(.stop, dev, u1, reason: .disconnected)])
        #expect(endedRecord(effects)?.reason == .disconnected)
    }

    @Test("a link that drops before it was ever up leaves connectTimeout in charge")
    func downBeforeUp() {
        var d = answeredIncomingDevice()
        #expect(d.mediaLinkDown(sessionId: "s1", now: t0 + 2000) == [])
        #expect(sent(d.timerFired(timer(.connectTimeout), now: t0 + 21_000)) == [msg(.stop, dev, u1, reason: .connectFailed)])
    }

    @Test("media events for another session change nothing")
    func mediaOtherSession() {
        var d = answeredIncomingDevice()
        #expect(d.mediaLinkUp(sessionId: "zz", now: t0 + 2000) == [])
        #expect(d.mediaLinkDown(sessionId: "zz", now: t0 + 2000) == [])
        #expect(d.session?.mediaLink == .awaitingConnect)
    }

    @Test("shutdown: an answered call gets hang_up with reason shutdown")
    func shutdownAnswered() {
        var d = answeredIncomingDevice()
        let effects = d.shutdown(now: t0 + 5000)
        #expect(sent(effects) == [msg(.hangUp, dev, u1, reason: .shutdown)])
        #expect(endedRecord(effects)?.reason == .shutdown)
        #expect(d.phase == .shutDown)
    }

    @Test("shutdown: an incoming call still ringing gets reject with reason shutdown")
    func shutdownRingingIncoming() {
        var d = ringingDevice()
        let effects = d.handle(.shutdown, now: t0 + 5000)
        #expect(withoutRecord(effects) == [
            .send(msg(.reject, dev, u1, reason: .shutdown)),
            .stopRinging(sessionId: "s1"),
            .cancelTimer(timer(.callDeadline)),
        ])
        #expect(d.phase == .shutDown)
    }

    @Test("shutdown: an outgoing call still ringing gets cancel to every target with reason shutdown")
    func shutdownRingingOutgoing() throws {
        var d = deviceEngine()
        _ = try d.perform(.press(DoorbellPress(sessionId: "o1", callType: .oneToMore)), now: t0)
        _ = d.receive(msg(.busy, u3, dev, "o1"), now: t0 + 10)
        let effects = d.shutdown(now: t0 + 5000)
        #expect(sent(effects) == [msg(.cancel, dev, u1, "o1", reason: .shutdown),
                                  msg(.cancel, dev, u2, "o1", reason: .shutdown)])
        #expect(endedRecord(effects)?.outcome == .cancelled)
    }

    @Test("stop from the peer ends the answered call; no reply")
    func stopFromPeer() {
        var d = answeredIncomingDevice()
        let effects = d.receive(msg(.stop, u1, dev, reason: .heartbeatTimeout), now: t0 + 40_000)
        #expect(sent(effects).isEmpty)
        let record = endedRecord(effects)
        #expect(record?.outcome == .stopped)
        #expect(record?.endedBy == .remote)
        #expect(record?.reason == .heartbeatTimeout)
        #expect(record?.remoteReason == "heartbeat_timeout")
        #expect(d.phase == .idle)
    }

    @Test("heartbeats and link timers also run for an answered outgoing call")
    func outgoingAnsweredCallTimers() throws {
        var d = deviceEngine()
        _ = try d.perform(.press(DoorbellPress(sessionId: "o1")), now: t0)
        _ = d.receive(msg(.answer, u1, dev, "o1"), now: t0 + 1000)
        #expect(d.receive(msg(.heartbeat, u1, dev, "o1"), now: t0 + 11_000) ==
                [.send(msg(.heartbeat, dev, u1, "o1")), .armTimer(timer(.heartbeatWatchdog, "o1"), at: t0 + 41_000)])
        let effects = d.timerFired(timer(.connectTimeout, "o1"), now: t0 + 21_000)
        #expect(sent(effects) == [msg(.stop, dev, u1, "o1", reason: .connectFailed)])
    }

    @Test("a timer of an ended session is stale and changes nothing, even in a new session")
    func staleTimerAfterEnd() {
        var d = answeredIncomingDevice()
        _ = d.receive(msg(.hangUp, u1, dev), now: t0 + 5000)
        _ = d.receive(call(from: u2, session: "s2", deadline: t0 + 60_000), now: t0 + 6000)
        #expect(d.timerFired(timer(.heartbeatWatchdog), now: t0 + 31_000) == [])
        #expect(d.timerFired(timer(.callDeadline), now: t0 + 30_000) == [])
        #expect(d.session?.sessionId == "s2")
        #expect(d.phase == .ringingIncoming)
    }
}
