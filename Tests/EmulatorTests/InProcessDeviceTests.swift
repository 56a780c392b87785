import AppSimulator
import CallEngine
import CallRuntime
import Emulator
import Foundation
import IPCEmuTesting
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 9, one engine host: a `Device` and an `AppUser` with their transport and clock injected,
/// driven through a whole call on an in-process bus (no broker, no socket, no real clock needed).
@Suite("Device and app user on an injected transport and clock")
struct InProcessDeviceTests {
    static func device(on bus: InProcessBus, household: [String], clock: any EngineClock = SystemClock())
        throws -> (Device, DeviceProfile)
    {
        let profile = DeviceProfile.testDoorbell(household: household, answerPolicy: .manual)
        let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
        return (try Device(profile: profile, transport: bus.transport(options: options), clock: clock), profile)
    }

    static func app(_ userId: String, on bus: InProcessBus, reaching profile: DeviceProfile) async throws -> AppUser {
        let app = AppUser(userId: userId, transport: bus.transport(options: MQTTClientOptions(clientID: "app-\(userId)")))
        try await app.start()
        try await app.add(DeviceAddress(devId: profile.identity.devId))
        return app
    }

    @Test("a call rings and is answered; the device's shutdown hangs up (shutdown) and leaves it offline")
    func wholeCall() async throws {
        let bus = InProcessBus()
        let (device, profile) = try Self.device(on: bus, household: ["u1"])
        let deviceEvents = await device.events()
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(30)))
        let online = try #require(bus.retainedMessage(profile.resolvedTopics.online))
        #expect(online.payloadText.contains(#""online":true"#))

        let app = try await Self.app("u1", on: bus, reaching: profile)
        let appEvents = await app.events()
        let sessionId = try await app.startCall(devId: profile.identity.devId)
        #expect(await first(deviceEvents) { if case .ringing(sessionId) = $0 { true } else { false } } != nil)
        #expect(await first(appEvents) { if case .deviceRinging(sessionId, _) = $0 { true } else { false } } != nil)

        try await device.answer()
        let answered = await first(appEvents) {
            if case .received(let m, _) = $0 { m.event == .answer } else { false }
        }
        #expect(answered != nil)
        #expect(await app.phase == .answered)

        await device.stop()
        let ended = await first(appEvents) { if case .callEnded = $0 { true } else { false } }
        guard case .callEnded(let record) = ended else {
            Issue.record("the app saw no end of the call")
            return
        }
        #expect(record.sessionId == sessionId)
        #expect(record.remoteReason == StopReason.shutdown.rawValue)
        #expect(bus.retainedMessage(profile.resolvedTopics.online)?.payloadText.contains(#""online":false"#) == true)
        await app.stop()
    }

    @Test("the device reads time from its injected clock: an hour ahead, a fresh call is expired")
    func injectedClock() async throws {
        let bus = InProcessBus()
        let clock = ManualClock(nowMs: WallClock.nowMs() + 3_600_000)
        let (device, profile) = try Self.device(on: bus, household: ["u1"], clock: clock)
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(30)))
        let app = try await Self.app("u1", on: bus, reaching: profile)
        let appEvents = await app.events()
        let sessionId = try await app.startCall(devId: profile.identity.devId)
        let stop = await first(appEvents) { if case .received(let m, _) = $0 { m.event == .stop } else { false } }
        guard case .received(let message, _) = stop else {
            Issue.record("no stop for a call behind the device's clock")
            return
        }
        #expect(message.sessionId == sessionId)
        #expect(message.reason == StopReason.expired.rawValue)
        #expect(await device.status.phase == .idle)
        await app.stop()
        await device.stop()
    }
}

/// The first event of `stream` that satisfies `match`, or nil when none comes within 5 s.
private func first<Event: Sendable>(_ stream: AsyncStream<Event>, _ match: @escaping @Sendable (Event) -> Bool) async -> Event? {
    await withTaskGroup(of: Event?.self) { group in
        group.addTask {
            for await event in stream where match(event) { return event }
            return nil
        }
        group.addTask {
            // Only a failure waits this long; under a parallel swift test tasks have resumed 8 s late.
            try? await Task.sleep(for: .seconds(30))
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}

/// PROTOCOL.md 4: the device echoes the offer's `tid`; the app simulator uses it so that a reply
/// to an earlier offer of a session (a refusal still in flight) cannot close the link that
/// replaced it (the cause of a scenario that intermittently saw 0 frames).
@Suite("App simulator: replies to an earlier offer")
struct StaleReplyTests {
    @Test("a disconnect carrying another offer's tid leaves the link; its own tid closes it")
    func staleDisconnect() async throws {
        let bus = InProcessBus()
        let address = DeviceAddress(devId: "dev-stale")
        let app = AppUser(userId: "u1", transport: bus.transport(options: MQTTClientOptions(clientID: "app-u1")))
        try await app.start()
        try await app.add(address)
        let events = await app.events()
        try await app.openVideo(sessionId: "s1", devId: address.devId, decodes: false)
        // The offer the app sent, and its tid.
        var offerTid: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while offerTid == nil, ContinuousClock.now < deadline {
            var opener = try PayloadOpener(mode: .plain, localKey: "0123456789abcdef")
            for m in bus.published where m.topic == address.inTopic {
                if case .signal(let s) = try opener.openMessage(m.payload).message, case .offer = s.body { offerTid = s.header.tid }
            }
            if offerTid == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let tid = try #require(offerTid)
        #expect(!tid.isEmpty)

        func disconnect(reason: Int64, tid: String) {
            let header = SignalHeader(from: address.devId, to: "u1", sessionId: "s1", tid: tid)
            let message = SignalMessage(header: header, body: .disconnect(SignalDisconnect(closeReason: reason)))
            bus.publish(topic: address.outTopic, payload: message.envelope(t: WallClock.nowSeconds()).encoded())
        }
        disconnect(reason: 1, tid: "an-earlier-offer")
        disconnect(reason: 2, tid: tid)
        // Both were delivered in order; the second one's event proves the first was handled.
        var seen = 0
        for await event in events {
            if case .signal(let s, _) = event, case .disconnect = s.body { seen += 1 }
            if seen == 2 { break }
        }
        #expect(await app.disconnectReason(sessionId: "s1") == 2)
        #expect(await app.videoLinkState(sessionId: "s1") == nil)
        await app.stop()
    }
}
