import AppSimulator
import CV4L2
import CameraTestSupport
import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import IPCEmuTesting
import MQTTTransport
import Testing
import TestSupport
@testable import Emulator

/// Issue 11: a V4L2 camera is opened once however many links stream it; live view and an answered
/// call share it. The camera is the fake driver behind the injectable ioctl table, reached through
/// the device's injected feeds; signalling runs on an in-process bus, media over real WebRTC.
@Suite("One V4L2 camera shared by a call and live view")
struct SharedCameraTests {
    static let path = "/dev/video-shared-test"

    @Test("the answered call and a live-view viewer both decode frames from one open of the camera")
    func callAndLiveViewShareTheCamera() async throws {
        let camera = FakeV4L2.Camera(path: Self.path, card: "Shared Fake Cam",
                                     offers: [.init(fourcc: CV4L2_PIX_FMT_YUYV, sizes: [(640, 360)], fps: [15])])
        camera.framesPerSecond = 15
        let fake = FakeV4L2([camera])
        let feeds = VideoFeeds(v4l2Driver: fake.driver)
        feeds.linger = .milliseconds(50)

        var profile = DeviceProfile.testDoorbell(household: ["u1", "u2"], answerPolicy: .answer(afterSeconds: 0))
        profile.camera = .v4l2(.init(device: Self.path, format: .yuyv, width: 640, height: 360, fps: 15))
        profile.capabilities.liveView = true
        // Generous call timers: on a loaded machine a 3 s heartbeat timeout ends the call before
        // the video is up, which is not what this test is about.
        profile.timers = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 20, connectTimeout: 20)
        let bus = InProcessBus()
        let device = try Device(profile: profile,
                                transport: bus.transport(options: Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))),
                                feeds: feeds)
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(5)))

        func app(_ userId: String) -> AppUser {
            AppUser(userId: userId, transport: bus.transport(options: MQTTClientOptions(clientID: "app-\(userId)")),
                    config: AppEngineConfig(userId: userId, heartbeatIntervalMs: 1000))
        }
        let caller = app("u1"), viewer = app("u2")
        let address = DeviceAddress(devId: profile.identity.devId, localKey: profile.identity.localKey,
                                    p2pPassword: profile.identity.p2pPassword)
        for app in [caller, viewer] {
            try await app.start()
            try await app.add(address)
        }
        let callEvents = await caller.events()
        let session = try await caller.startCall(devId: profile.identity.devId)
        for await event in callEvents {
            if case .received(let m, _) = event, m.event == .answer { break }
        }
        try await caller.openVideo(sessionId: session)
        try await viewer.openVideo(sessionId: "live-view-1", devId: profile.identity.devId)

        #expect(await framesDecoded(caller, session, atLeast: 10))
        #expect(await framesDecoded(viewer, "live-view-1", atLeast: 10))
        // One open of the camera, one capture and one encoder (both links are the main stream).
        #expect(fake.openCount == 1)
        #expect(feeds.counts.captures == 1)
        #expect(feeds.counts.feeds == 1)
        #expect(await device.mediaLinks.count == 2)

        await viewer.stop()
        await caller.stop()
        await device.stop()
        // The last link gone, the feed lingers 50 ms and then closes the camera (the capture
        // thread calls the fake driver until then: it must outlive the capture).
        let deadline = ContinuousClock.now + .seconds(10)
        while feeds.counts.captures > 0 || fake.openCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(feeds.counts.captures == 0)
        #expect(fake.openCount == 0)
        withExtendedLifetime(fake) {}
    }
}

/// Issue 10: the camera unplugged mid-call. The device reports it (its `cameraStatus`, a warning),
/// the call goes on, and the video resumes when the camera is plugged back.
@Suite("A camera unplugged mid-call")
struct CameraUnplugTests {
    static let path = "/dev/video-unplug-test"

    @Test("the device reports the lost camera, the call stays answered, video resumes when it is back")
    func unplugMidCall() async throws {
        let camera = FakeV4L2.Camera(path: Self.path, card: "Unplug Fake Cam",
                                     offers: [.init(fourcc: CV4L2_PIX_FMT_YUYV, sizes: [(640, 360)], fps: [15])])
        camera.framesPerSecond = 15
        let fake = FakeV4L2([camera])
        let feeds = VideoFeeds(v4l2Driver: fake.driver)
        feeds.linger = .milliseconds(50)
        var profile = DeviceProfile.testDoorbell(household: ["u1"], answerPolicy: .answer(afterSeconds: 0))
        profile.camera = .v4l2(.init(device: Self.path, format: .yuyv, width: 640, height: 360, fps: 15))
        profile.timers = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 30, connectTimeout: 30)
        let bus = InProcessBus()
        let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
        let device = try Device(profile: profile, transport: bus.transport(options: options), feeds: feeds)
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(5)))
        let app = AppUser(userId: "u1", transport: bus.transport(options: MQTTClientOptions(clientID: "app-u1")),
                          config: AppEngineConfig(userId: "u1", heartbeatIntervalMs: 1000))
        try await app.start()
        try await app.add(DeviceAddress(devId: profile.identity.devId, localKey: profile.identity.localKey,
                                        p2pPassword: profile.identity.p2pPassword))
        let events = await app.events()
        let session = try await app.startCall(devId: profile.identity.devId)
        for await event in events {
            if case .received(let m, _) = event, m.event == .answer { break }
        }
        try await app.openVideo(sessionId: session)
        #expect(await framesDecoded(app, session, atLeast: 10))

        fake.unplug(Self.path)
        #expect(await waitFor { if case .noVideo = await device.cameraStatus { true } else { false } })
        #expect(await device.status.phase == .answered)

        fake.plug(Self.path)
        #expect(await waitFor { if case .live = await device.cameraStatus { true } else { false } })
        let atReturn = await app.videoStats(sessionId: session)?.framesDecoded ?? 0
        #expect(await framesDecoded(app, session, atLeast: atReturn + 10))
        #expect(await device.status.phase == .answered)

        await app.stop()
        await device.stop()
        let deadline = ContinuousClock.now + .seconds(10)
        while feeds.counts.captures > 0 || fake.openCount > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        withExtendedLifetime(fake) {}
    }
}

/// Polls `condition` every 20 ms for up to 15 s.
private func waitFor(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(15)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// Waits (up to 20 s) until the app has decoded `count` frames on the session's link.
private func framesDecoded(_ app: AppUser, _ session: String, atLeast count: Int) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        if let stats = await app.videoStats(sessionId: session), stats.framesDecoded >= count { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}
