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
@Suite("One V4L2 camera shared by a call and live view", .heavy)
struct SharedCameraTests {
    static let path = "/dev/video-shared-test"

    @Test("the answered call and a live-view viewer both decode frames from one open of the camera")
    func callAndLiveViewShareTheCamera() async throws {
        let rig = try await FakeCameraRig(path: Self.path, household: ["u1", "u2"], liveView: true)
        let (device, feeds, fake, profile) = (rig.device, rig.feeds, rig.fake, rig.profile)
        let caller = rig.app("u1"), viewer = rig.app("u2")
        let address = rig.address
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
        await rig.finish()
        #expect(feeds.counts.captures == 0)
        #expect(fake.openCount == 0)
    }
}

/// Issue 10: the camera unplugged mid-call. The device reports it (its `cameraStatus`, a warning),
/// the call goes on, and the video resumes when the camera is plugged back.
@Suite("A camera unplugged mid-call", .heavy)
struct CameraUnplugTests {
    static let path = "/dev/video-unplug-test"

    @Test("the device reports the lost camera, the call stays answered, video resumes when it is back")
    func unplugMidCall() async throws {
        let rig = try await FakeCameraRig(path: Self.path, household: ["u1"], liveView: false)
        let (device, fake, profile) = (rig.device, rig.fake, rig.profile)
        let app = rig.app("u1")
        try await app.start()
        try await app.add(rig.address)
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
        #expect(await device.status.camera.losses == 1)

        fake.plug(Self.path)
        #expect(await waitFor { if case .live = await device.cameraStatus { true } else { false } })
        let atReturn = await app.videoStats(sessionId: session)?.framesDecoded ?? 0
        #expect(await framesDecoded(app, session, atLeast: atReturn + 10))
        #expect(await device.status.phase == .answered)
        #expect(await device.status.camera.losses == 1, "one unplug is one loss, however many retries it took")

        await app.stop()
        await rig.finish()
    }
}

/// A device whose camera is a fake V4L2 camera (YUYV 640x360 at 15 fps) behind its own feeds, on an
/// in-process bus, with generous call timers (on a loaded machine a 3 s heartbeat timeout ends the
/// call before the video is up, which is not what these tests are about).
private struct FakeCameraRig {
    let fake: FakeV4L2
    let feeds: VideoFeeds
    let profile: DeviceProfile
    let bus = InProcessBus()
    let device: Device

    init(path: String, household: [String], liveView: Bool) async throws {
        let camera = FakeV4L2.Camera(path: path, card: "Fake Cam \(path)",
                                     offers: [.init(fourcc: CV4L2_PIX_FMT_YUYV, sizes: [(640, 360)], fps: [15])])
        camera.framesPerSecond = 15
        fake = FakeV4L2([camera])
        feeds = VideoFeeds(v4l2Driver: fake.driver)
        feeds.linger = .milliseconds(50)
        var profile = DeviceProfile.testDoorbell(household: household, answerPolicy: .answer(afterSeconds: 0))
        profile.camera = .v4l2(.init(device: path, format: .yuyv, width: 640, height: 360, fps: 15))
        profile.capabilities.liveView = liveView
        profile.timers = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 30, connectTimeout: 30)
        self.profile = profile
        let options = Device.clientOptions(profile: profile, connection: MQTTClientOptions(clientID: ""))
        device = try Device(profile: profile, transport: bus.transport(options: options), feeds: feeds)
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(30)))
    }

    var address: DeviceAddress {
        DeviceAddress(devId: profile.identity.devId, localKey: profile.identity.localKey,
                      p2pPassword: profile.identity.p2pPassword)
    }

    /// An app user on the bus that heartbeats every second.
    func app(_ userId: String) -> AppUser {
        AppUser(userId: userId, transport: bus.transport(options: MQTTClientOptions(clientID: "app-\(userId)")),
                config: AppEngineConfig(userId: userId, heartbeatIntervalMs: 1000))
    }

    /// Stops the device and waits until the feed has closed the camera: the capture thread calls
    /// the fake driver until then, so the fake must outlive it.
    func finish() async {
        await device.stop()
        let deadline = ContinuousClock.now + .seconds(10)
        while feeds.counts.captures > 0 || fake.openCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
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
