import IPCEmuTesting
import XCTest

/// XCTest: the same library from a classic test case.
final class FleetXCTests: XCTestCase {
    func testFiftyDoorbellsCalledAtRandom() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let fleet = try await VirtualFleet.start(.testDoorbell(devId: "porch-{index:2}"), count: 50, on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: fleet.devices)
        XCTAssertEqual(Set(fleet.devIds).count, 50)

        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10 {
            let door = fleet.devices.randomElement(using: &generator)!
            let sessionId = try await alice.startCall(devId: door.devId)
            let answered = try await alice.waitUntilAnswered()
            XCTAssertEqual(answered, sessionId)
            try await door.waitUntil(.answered)
            try await alice.hangUp()
            let record = try await door.waitForCallEnd()
            XCTAssertEqual(record.sessionId, sessionId)
            XCTAssertEqual(record.outcome, .hungUp)
        }
        await alice.stop()
        await fleet.stop()
    }

    func testRejectingDoorbellReportsSDKError() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        var profile = DeviceProfile.testDoorbell()
        profile.behaviour.answerPolicy = .rejectAfter(seconds: 0.2)
        let door = try await VirtualDevice.start(profile, on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [door])
        try await alice.startCall(devId: door.devId)
        try await door.waitUntilRinging()
        let record = try await alice.waitForCallEnd()
        XCTAssertEqual(record.sdkError, .rejected)
        await alice.stop()
        await door.stop()
    }
}
