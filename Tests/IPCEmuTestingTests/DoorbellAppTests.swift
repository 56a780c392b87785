import Foundation
import IPCEmuTesting
import Testing
import TestSupport

/// PROTOCOL.md 8 from the app's side, as another package's tests drive it: presses over 43
/// answered with `video_doorbell`, DPs, wake, 312, through a real mosquitto and real WebRTC.
@Suite("IPCEmuTesting: doorbells (PROTOCOL.md 8)", .serialized, .heavy, .timeLimit(.minutes(8)))
struct DoorbellAppTests {
    @Test("8.1, 8.2, 8.6: a press rings alice with the 43's call id; she accepts, heartbeats are answered, video flows, speaker on is done; her stop hangs up")
    func pressAcceptVideoHangUp() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(kind: .acDoorbell), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door], heartbeatIntervalSeconds: 0.3)

        let callId = try await door.press()
        #expect(try await door.waitForPressMessage() == callId)
        let ring = try await alice.waitForDoorbell()
        #expect(ring.devId == door.devId && ring.callId == callId)
        #expect(await alice.doorbellPhase == .ringingIncoming)
        // 8.1: DP 136 (the press time) comes right after the 43.
        #expect(try await alice.waitForDP(devId: door.devId, 136) == .string(String(callId.dropFirst(8))))

        try await alice.acceptDoorbell(devId: door.devId, callId: callId)
        let answered = try await alice.waitUntilDoorbellAnswered()
        #expect(answered.callId == callId && answered.by == "user-alice")
        #expect(await alice.doorbellPhase == .answered)
        // 8.2: "heartbeat (from the user who accepted, every heartbeatInterval)", one reply each.
        let beat = try await alice.waitForDoorbellMessage(.heartbeat, timeout: .seconds(3))
        #expect(beat.uid == "user-alice" && beat.eData == callId)

        let sid = try await alice.openDoorbellVideo()
        #expect(sid == callId)
        let stats = try await alice.waitForVideoFrames(10, sessionId: sid)
        #expect(stats.width == 320 && stats.height == 240)
        #expect(try await alice.speaker(on: true) == 0)

        try await alice.hangUpDoorbell(callId: callId)
        let record = try await alice.waitForCallEnd()
        #expect(record.sessionId == callId && record.outcome == .hungUp && record.sdkError == nil)
        #expect(await alice.doorbellPhase == .idle)
        await alice.stop()
        await door.stop()
    }

    @Test("8.2: bob accepts first: alice's call ends answered by others (-2522); bob's is answered")
    func answeredByOther() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(household: ["user-alice", "user-bob"]), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])
        let bob = try await VirtualAppUser.start("user-bob", on: broker, reaching: [door])

        let callId = try await door.press()
        _ = try await alice.waitForDoorbell()
        _ = try await bob.waitForDoorbell()
        try await bob.acceptDoorbell()
        #expect(try await bob.waitUntilDoorbellAnswered().by == "user-bob")
        let aliceRecord = try await alice.waitForCallEnd()
        #expect(aliceRecord.sessionId == callId && aliceRecord.sdkError == .answeredByOthers)
        #expect(aliceRecord.answeredBy == "user-bob")
        #expect(await bob.doorbellPhase == .answered)
        await alice.stop()
        await bob.stop()
        await door.stop()
    }

    @Test("8.2: nobody accepts: the device's timeout ends the call with -2530; a decline by the only user ends it too")
    func timeoutAndDecline() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(ringTimeout: 1), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])

        let first = try await door.press()
        _ = try await alice.waitForDoorbell()
        let timeout = try await alice.waitForDoorbellMessage(.timeout, timeout: .seconds(4))
        #expect(timeout.eData == first && timeout.uid == nil)
        let record = try await alice.waitForCallEnd()
        #expect(record.sessionId == first && record.sdkError == .timeout)

        // 8.2: "also when every household user has sent stop before an accept".
        let second = try await door.press()
        #expect(try await alice.waitForDoorbell().callId == second)
        try await alice.declineDoorbell(callId: second)
        #expect(try await alice.waitForCallEnd().outcome == .rejected)
        // Consecutive waits see consecutive messages: the first call's timeout, then this one's.
        #expect(try await door.waitUntilSentDoorbell(.timeout).eData == first)
        #expect(try await door.waitUntilSentDoorbell(.timeout).eData == second)
        await alice.stop()
        await door.stop()
    }

    @Test("8.3: set a writable DP (echoed), a read-only one (its value reported back), query all")
    func dataPoints() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])

        try await alice.setDP(devId: door.devId, 147, .int(30))
        #expect(try await alice.waitForDP(devId: door.devId, 147, equals: .int(30)) == .int(30))
        #expect(try await door.waitForDP(147, equals: .int(30)) == .int(30))
        // DP 145 is read-only: not applied, its current value reported back.
        try await alice.setDP(devId: door.devId, 145, .int(5))
        try await door.waitForDP(145, equals: .int(100))
        try await alice.queryDPs(devId: door.devId)
        try await alice.waitForDP(devId: door.devId, 151)
        let dps = await alice.dps(devId: door.devId)
        #expect(dps[145] == .int(100) && dps[147] == .int(30) && dps[149] == .bool(true))
        await #expect(throws: WaitTimeout.self) {
            try await alice.waitForDP(devId: door.devId, 147, equals: .int(31), timeout: .milliseconds(300))
        }
        await alice.stop()
        await door.stop()
    }

    @Test("8.4: a battery doorbell sleeps (DP 149 false); wake over m/w/{devId} -> DP 149 true after wakeLatency; then a press, accept and video")
    func wakeThenLiveCall() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(kind: .doorbell, sleepAfter: 1, wakeLatency: 0.4), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])

        try await door.waitForDP(149, equals: .bool(false), timeout: .seconds(5))
        try await alice.waitForDP(devId: door.devId, 149, equals: .bool(false))
        let woke = try await alice.wake(devId: door.devId)
        #expect(!woke.wasAwake)
        #expect(woke.milliseconds >= 350 && woke.milliseconds < 3000, "wake took \(woke.milliseconds) ms")
        // The device's own report of 149 true (its watcher is another MQTT client than alice's,
        // so it may still hold the false it saw last): wait for that value, not for any value.
        #expect(try await door.waitForDP(149, equals: .bool(true), timeout: .seconds(30)) == .bool(true))

        let callId = try await door.press()
        try await alice.acceptDoorbell(callId: (try await alice.waitForDoorbell()).callId)
        #expect(try await alice.waitUntilDoorbellAnswered().callId == callId)
        try await alice.openDoorbellVideo()
        try await alice.waitForVideoFrames(5)
        try await alice.hangUpDoorbell()
        _ = try await alice.waitForCallEnd()
        await alice.stop()
        await door.stop()
    }

    @Test("8.4: wake by DP 149 = true (protocol 5) on a sleeping doorbell")
    func wakeByDP() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testTuyaDoorbell(kind: .doorbell, sleepAfter: 1, wakeLatency: 0.2), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])
        try await alice.waitForDP(devId: door.devId, 149, equals: .bool(false), timeout: .seconds(5))
        try await alice.setDP(devId: door.devId, 149, .bool(true))
        #expect(try await alice.waitForDP(devId: door.devId, 149, equals: .bool(true), timeout: .seconds(3)) == .bool(true))
        await alice.stop()
        await door.stop()
    }
}
