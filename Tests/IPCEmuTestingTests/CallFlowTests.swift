import Foundation
import IPCEmuTesting
import Testing
import TestSupport

/// The library as another package's tests use it: only `import IPCEmuTesting`.
@Suite("IPCEmuTesting: call flows", .serialized, .heavy)
struct CallFlowTests {
    @Test("app calls, the device rings and answers, video frames arrive with stamps, hang up", .timeLimit(.minutes(8)))
    func callAnswerVideoHangUp() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let device = try await VirtualDevice.start(.testDoorbell(answerPolicy: .manual), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])

        let sessionId = try await alice.startCall(devId: device.devId)
        #expect(try await device.waitUntilRinging() == sessionId)
        #expect(try await alice.waitUntilDeviceRings() == sessionId)
        try await device.answer()
        #expect(try await alice.waitUntilAnswered() == sessionId)
        try await device.waitUntil(.answered)

        try await alice.openVideo()
        let stats = try await alice.waitForVideoFrames(20)
        #expect(stats.width == 320 && stats.height == 240)
        #expect(stats.stampsRead > 0)
        try await device.waitUntilFramesSent(atLeast: 20)

        try await alice.hangUp()
        let appRecord = try await alice.waitForCallEnd()
        #expect(appRecord.outcome == .hungUp && appRecord.sdkError == nil)
        let deviceRecord = try await device.waitForCallEnd()
        #expect(deviceRecord.sessionId == sessionId && deviceRecord.endedBy == .remote)
        await alice.stop()
        await device.stop()
    }

    @Test("a doorbell press rings the app user of the household, who answers; the device hangs up")
    func pressRingsTheApp() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let device = try await VirtualDevice.start(.testDoorbell(household: ["user-bob"]), on: broker)
        let bob = try await VirtualAppUser.start("user-bob", on: broker, reaching: [device])

        let sessionId = try await device.press()
        let incoming = try await bob.waitForIncomingCall()
        #expect(incoming.sessionId == sessionId && incoming.devId == device.devId)
        try await bob.answer()
        try await device.waitUntil(.answered)
        try await device.hangUp()
        let record = try await bob.waitForCallEnd()
        #expect(record.outcome == .hungUp)
        #expect(record.sdkError == .peerHungUp)
        await bob.stop()
        await device.stop()
    }

    @Test("answerDelay delays a reject: the app sees -2510 no sooner than the delay")
    func delayedReject() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let device = try await VirtualDevice.start(.testDoorbell(answerPolicy: .rejectAfter(seconds: 0.4)), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])

        let clock = ContinuousClock()
        let started = clock.now
        try await alice.startCall(devId: device.devId)
        try await alice.waitUntilDeviceRings()
        let record = try await alice.waitForCallEnd()
        #expect(record.outcome == .rejected)
        #expect(record.sdkError == .rejected)
        #expect(clock.now - started >= .milliseconds(350))

        // Flipping the policy is one line: the next call is answered.
        try await device.setAnswerPolicy(.answer(afterSeconds: 0))
        try await alice.startCall(devId: device.devId)
        try await alice.waitUntilAnswered()
        try await alice.hangUp()
        await alice.stop()
        await device.stop()
    }

    @Test("a busy device: the app's call ends with -2511; faults and acting busy")
    func busyDevice() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let device = try await VirtualDevice.start(.testDoorbell(), on: broker)
        try await device.setActingBusy(true)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])
        try await alice.startCall(devId: device.devId)
        let record = try await alice.waitForCallEnd()
        #expect(record.sdkError == .peerBusy)
        #expect(await device.state.actingBusy)
        let ability = try await alice.fetchCallAbility(devId: device.devId)
        #expect(ability.devId == device.devId)
        await alice.stop()
        await device.stop()
    }
}
