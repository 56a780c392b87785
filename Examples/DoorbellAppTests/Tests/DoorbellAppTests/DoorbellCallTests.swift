import IPCEmuTesting
import Testing

/// Swift Testing: what the doorbell app's team checks against virtual doorbells.
@Suite("Doorbell app against virtual doorbells", .serialized)
struct DoorbellCallTests {
    @Test("press -> ring -> answer -> video frames -> hang up", .timeLimit(.minutes(1)))
    func pressAnswerWatchHangUp() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testDoorbell(household: ["user-alice"]), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])

        let sessionId = try await door.press()
        #expect(try await alice.waitForIncomingCall().sessionId == sessionId)
        try await alice.answer()
        try await door.waitUntil(.answered)

        try await alice.openVideo()
        let video = try await alice.waitForVideoFrames(30)
        #expect(video.stampsRead > 0, "\(video.summary)")
        #expect(video.answerToFirstFrameMs != nil)

        try await alice.hangUp()
        #expect(try await door.waitForCallEnd().outcome == .hungUp)
        await alice.stop()
        await door.stop()
    }

    @Test("a doorbell that rejects: the app reports -2510")
    func rejectingDoorbell() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let door = try await VirtualDevice.start(.testDoorbell(answerPolicy: .reject), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])

        try await alice.startCall(devId: door.devId)
        let record = try await alice.waitForCallEnd()
        #expect(record.outcome == .rejected)
        #expect(record.sdkError == .rejected)
        #expect(await door.state.callsEnded == 1)
        await alice.stop()
        await door.stop()
    }
}
