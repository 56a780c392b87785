import Foundation
import IPCEmuTesting
import Testing
import TestSupport

@Suite("IPCEmuTesting: waits, profiles, brokers, fleets", .serialized, .heavy)
struct WaitingTests {
    @Test("a wait that times out says what it waited for, the state, and what it saw")
    func timeoutMessage() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        // 30 s to come online: an upper bound for the first test of a heavy suite when plain
        // parallel `swift test` starts every suite's brokers and devices at once on 2 cores.
        let device = try await VirtualDevice.start(.testDoorbell(devId: "quiet-door", answerPolicy: .busy), on: broker,
                                                   timeout: .seconds(30))
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])

        // Nothing calls: no ring, and the message says the device stayed idle.
        let silent = await #expect(throws: WaitTimeout.self) { try await device.waitUntilRinging(timeout: .milliseconds(200)) }
        #expect(silent?.description.hasPrefix("device quiet-door: no \"the device rings\" within 0.2 s; state: idle") == true)

        // A busy device: waiting for an answer fails, naming the busy that came instead.
        try await alice.startCall(devId: device.devId)
        try await device.waitUntilSent(.busy)
        let error = await #expect(throws: WaitTimeout.self) { try await alice.waitUntilAnswered(timeout: .milliseconds(300)) }
        let text = error?.description ?? ""
        #expect(text.contains("app user user-alice: no \"the call is answered\""), "\(text)")
        #expect(text.contains("<- busy session="), "\(text)")
        #expect(text.contains("call ended busy"), "\(text)")

        let phase = await #expect(throws: WaitTimeout.self) { try await device.waitUntil(.answered, timeout: .milliseconds(100)) }
        #expect(phase?.awaited == "phase answered" && phase?.state == "idle")
        await alice.stop()
        await device.stop()
    }

    @Test("consecutive waits see consecutive events; an event before the wait is not missed")
    func cursorSemantics() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let device = try await VirtualDevice.start(.testDoorbell(answerPolicy: .reject), on: broker)
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])
        let first = try await alice.startCall(devId: device.devId)
        #expect(try await alice.waitForCallEnd().sessionId == first)   // ended before this wait began
        let second = try await alice.startCall(devId: device.devId)
        #expect(try await alice.waitForCallEnd().sessionId == second)  // not the first one again
        #expect(try await device.waitForCallEnd().sessionId == first)
        #expect(try await device.waitForCallEnd().sessionId == second)
        await alice.stop()
        await device.stop()
    }

    @Test("a profile file whose answerDelay does not apply starts with a warning, not an error")
    func profileFileWithWarning() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-lib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("door.yaml").path
        try """
            identity:
              devId: file-door-1
              localKey: "0123456789abcdef"
              p2pPassword: pw
              category: sp_dpsxj
            behaviour:
              answerPolicy: ignore
              answerDelay: 2
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let device = try await VirtualDevice.start(profileAt: path, on: broker, log: EventLog(minimumLevel: .error))
        #expect(device.profile.behaviour.answerPolicy == .ignore)
        #expect(device.profile.warnings.map(\.field) == ["behaviour.answerDelay"])
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: [device])
        try await alice.startCall(devId: device.devId, timeoutSeconds: 1)
        try await device.waitUntilRinging()
        #expect(try await alice.waitForCallEnd(timeout: .seconds(6)).sdkError == .notAnswered)
        await alice.stop()
        await device.stop()
    }

    @Test("an external broker by URL; an mqtts URL is refused with a reason")
    func externalBroker() async throws {
        let embedded = try await TestBroker.start()
        defer { embedded.stop() }
        #expect(embedded.isEmbedded && embedded.url == "mqtt://127.0.0.1:\(embedded.port)")
        let external = try TestBroker.external(url: embedded.url)
        #expect(!external.isEmbedded && external.port == embedded.port)
        let device = try await VirtualDevice.start(.testDoorbell(), on: external)
        #expect(await device.state.connected)
        external.stop()   // does nothing to a broker it did not start
        #expect(await device.state.connected)
        await device.stop()
        #expect(throws: (any Error).self) { try TestBroker.external(url: "mqtts://127.0.0.1:8883") }
    }

    @Test("a fleet from a template: every member online with its own id; one called at random answers")
    func smallFleet() async throws {
        let broker = try await TestBroker.start()
        defer { broker.stop() }
        let fleet = try await VirtualFleet.start(.testDoorbell(devId: "lib-door-{index:2}"), count: 5, on: broker,
                                                 firstIndex: 1)
        #expect(fleet.devIds == ["lib-door-01", "lib-door-02", "lib-door-03", "lib-door-04", "lib-door-05"])
        let alice = try await VirtualAppUser.start("user-alice", on: broker, reaching: fleet.devices)
        let target = try #require(fleet.devices.randomElement())
        try await alice.startCall(devId: target.devId)
        try await alice.waitUntilAnswered()
        try await target.waitUntil(.answered)
        for other in fleet.devices where other.devId != target.devId {
            #expect(await other.phase == .idle)
        }
        try await alice.hangUp()
        try await target.waitForCallEnd()
        await alice.stop()
        await fleet.stop()
        await #expect(throws: FleetError.self) { try await VirtualFleet.start(.testDoorbell(), count: -1, on: broker) }
    }
}
