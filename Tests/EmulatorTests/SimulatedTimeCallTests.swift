import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCEmuTesting
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 23 "Seams": a `Device` and an `AppUser` on a real mosquitto, with every timer on one
/// `SimulatedClock` and simulated media links. Deadlines pass when the test advances the clock,
/// not in real time: the real waits below are only hang guards (5 s for a 30 s deadline).
@Suite("A call on simulated time: real broker, simulated clock and links")
struct SimulatedTimeCallTests {
    /// One device and one app user on `broker`, sharing one simulated clock.
    struct Rig {
        let sim = SimulatedClock()
        let profile: DeviceProfile
        let device: Device
        let app: AppUser
        let deviceLinks: SimulatedDeviceLinks
        let appLinks: SimulatedAppLinks
        let deviceEvents: AsyncStream<DeviceEvent>
        let appEvents: AsyncStream<AppEvent>

        init(broker: MosquittoBroker) async throws {
            // Heartbeats every 10 s (the app) and a 30 s watchdog (the device): none falls due in
            // the few simulated seconds these tests run.
            var profile = DeviceProfile.testDoorbell(household: ["u1"], answerPolicy: .manual)
            profile.timers = DeviceProfile.Timers(heartbeatInterval: 10, heartbeatTimeout: 30, connectTimeout: 20)
            self.profile = profile
            deviceLinks = SimulatedDeviceLinks(clock: sim, scheduler: sim, connectDelayMs: 100)
            appLinks = SimulatedAppLinks(clock: sim, scheduler: sim, connectDelayMs: 100)
            device = try Device(profile: profile, connection: broker.clientOptions(clientID: profile.identity.devId),
                                timers: sim, clock: sim, links: deviceLinks)
            app = try AppUser(userId: "u1", connection: broker.clientOptions(clientID: "app-u1"),
                              timers: sim, clock: sim, links: appLinks)
            deviceEvents = await device.events()
            appEvents = await app.events()
            try await device.start()
            guard await device.waitUntilConnected(timeout: .seconds(5)) else { throw RigError.deviceOffline }
            try await app.start()
            let topics = profile.resolvedTopics
            try await app.add(DeviceAddress(devId: profile.identity.devId, inTopic: topics.in, outTopic: topics.out,
                                            metaTopic: topics.meta, security: profile.security,
                                            localKey: profile.identity.localKey, p2pPassword: profile.identity.p2pPassword))
        }

        func stop() async {
            await app.stop()
            await device.stop()
        }
    }

    enum RigError: Error { case deviceOffline }

    @Test("a call nobody answers rings until the deadline, then ends not_answered on both sides when the clock passes it")
    func notAnswered() async throws {
        try await withBroker { broker in
            let rig = try await Rig(broker: broker)
            let devId = rig.profile.identity.devId
            let sessionId = try await rig.app.startCall(devId: devId, timeoutSeconds: 30)
            #expect(await firstEvent(rig.deviceEvents) { if case .ringing(sessionId) = $0 { true } else { false } } != nil)
            #expect(await firstEvent(rig.appEvents) { if case .deviceRinging(sessionId, _) = $0 { true } else { false } } != nil)

            // A millisecond before the deadline every timer due so far has run (advance awaits
            // each): the call still rings on both sides.
            await rig.sim.advance(byMs: 29_999)
            #expect(await rig.device.status.phase == .ringingIncoming)
            #expect(await rig.app.phase == .ringingOutgoing)

            await rig.sim.advance(byMs: 1)
            let deviceEnd = await firstEvent(rig.deviceEvents) { if case .callEnded = $0 { true } else { false } }
            guard case .callEnded(let deviceRecord) = deviceEnd else {
                Issue.record("the device did not end the call when the clock passed its deadline")
                return await rig.stop()
            }
            #expect(deviceRecord.sessionId == sessionId)
            #expect(deviceRecord.outcome == .notAnswered)
            #expect(deviceRecord.reason == .timeout)
            #expect(deviceRecord.endedAt == rig.sim.nowMs())  // ended at the deadline, on the simulated clock

            let appEnd = await firstEvent(rig.appEvents) { if case .callEnded = $0 { true } else { false } }
            guard case .callEnded(let appRecord) = appEnd else {
                Issue.record("the app did not see the call end")
                return await rig.stop()
            }
            #expect(appRecord.sessionId == sessionId)
            #expect(appRecord.outcome == .notAnswered)
            await rig.stop()
        }
    }

    @Test("a link that breaks mid-call: the device stops the call with disconnected 5 s of simulated time later")
    func brokenLink() async throws {
        try await withBroker { broker in
            let rig = try await Rig(broker: broker)
            let devId = rig.profile.identity.devId
            let sessionId = try await rig.app.startCall(devId: devId, timeoutSeconds: 30)
            #expect(await firstEvent(rig.deviceEvents) { if case .ringing(sessionId) = $0 { true } else { false } } != nil)
            try await rig.device.answer()
            #expect(await firstEvent(rig.appEvents) {
                if case .received(let m, _) = $0 { m.event == .answer } else { false }
            } != nil)

            // The app offers over the broker; the device's simulated link answers at once.
            try await rig.app.openVideo()
            #expect(await firstEvent(rig.appEvents) {
                if case .signal(let s, _) = $0 { s.type == .answer } else { false }
            } != nil)
            _ = await rig.app.videoLinkState(sessionId: sessionId)  // the answer's turn is done
            #expect(rig.deviceLinks.link(sessionId: sessionId)?.phase == .started)

            // Both links come up 100 ms later.
            await rig.sim.advance(byMs: 100)
            #expect(await eventually { await rig.device.isMediaLinkUp(sessionId: sessionId) })
            #expect(await rig.app.videoLinkState(sessionId: sessionId) == .connected)

            // The network breaks the device's link; the device sees it lost.
            #expect(rig.deviceLinks.breakLink(sessionId: sessionId))
            #expect(await eventually { await !rig.device.isMediaLinkUp(sessionId: sessionId) })
            let lostAt = rig.sim.nowMs()

            // Not back within 5 s: nothing before, `stop` disconnected at 5 s.
            await rig.sim.advance(byMs: 4_999)
            #expect(await rig.device.status.phase == .answered)
            await rig.sim.advance(byMs: 1)
            let stop = await firstEvent(rig.appEvents) {
                if case .received(let m, _) = $0 { m.event == .stop } else { false }
            }
            guard case .received(let message, _) = stop else {
                Issue.record("the app got no stop after the link stayed lost for 5 s")
                return await rig.stop()
            }
            #expect(message.sessionId == sessionId)
            #expect(message.reason == StopReason.disconnected.rawValue)
            let record = await rig.device.status.lastCall
            #expect(record?.reason == .disconnected)
            #expect(record?.endedAt == lostAt + 5_000)
            #expect(await firstEvent(rig.appEvents) { if case .callEnded = $0 { true } else { false } } != nil)
            await rig.stop()
        }
    }
}

/// The first event of `stream` that satisfies `match`, or nil when none comes within 5 s of real
/// time (a hang guard: simulated deadlines never wait for it).
private func firstEvent<Event: Sendable>(_ stream: AsyncStream<Event>,
                                         _ match: @escaping @Sendable (Event) -> Bool) async -> Event? {
    await withTaskGroup(of: Event?.self) { group in
        group.addTask {
            for await event in stream where match(event) { return event }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(5))
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}
