import AppSimulator
import CV4L2
import CallEngine
import CameraTestSupport
import ControlAPI
import DeviceProfile
@testable import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    /// Issue 10: a camera unplugged mid-call shows in `/metrics` (`ipcemu_camera_up`,
    /// `ipcemu_camera_losses_total`) and in the device's JSON (`media.camera`). The camera is the
    /// fake V4L2 driver behind the device's own feeds; signalling through a real mosquitto, media
    /// over real WebRTC.
    @Suite("Camera state in /metrics and the device JSON") struct CameraState {
        static let path = "/dev/video-control-metrics-test"

        @Test("unplugged mid-call: camera_up 0, one loss, JSON state lost; plugged back: up 1, state live, still one loss")
        func unplugShowsInMetrics() async throws {
            let camera = FakeV4L2.Camera(path: Self.path, card: "Fake Cam",
                                         offers: [.init(fourcc: CV4L2_PIX_FMT_YUYV, sizes: [(640, 360)], fps: [15])])
            camera.framesPerSecond = 15
            let fake = FakeV4L2([camera])
            let feeds = VideoFeeds(v4l2Driver: fake.driver)
            try await withControl(edit: { p in
                p.camera = .v4l2(.init(device: Self.path, format: .yuyv, width: 640, height: 360, fps: 15))
                p.behaviour.answerPolicy = .answer(afterSeconds: 0)
                // Generous: on a loaded machine a short heartbeat timeout ends the call before the video is up.
                p.timers = DeviceProfile.Timers(heartbeatInterval: 1, heartbeatTimeout: 30, connectTimeout: 30)
            }, feeds: feeds) { f in
                let d = ["device": f.devId]
                func metrics() async throws -> PrometheusText { try PrometheusText(try await f.request("GET", "/metrics").text) }
                func camera() async throws -> JSONValue? { try await f.request("GET", f.base).json?["media"]?["camera"] }

                // Before any link streamed it: unknown, not lost.
                let before = try await metrics()
                #expect(before.types["ipcemu_camera_up"] == "gauge")
                #expect(before.types["ipcemu_camera_losses_total"] == "counter")
                #expect(before.value("ipcemu_camera_up", d) == 1)
                #expect(before.value("ipcemu_camera_losses_total", d) == 0)
                #expect(try await camera()?["state"]?.string == "unknown")

                let (app, _) = try await f.app("user-alice", config: AppEngineConfig(userId: "user-alice", heartbeatIntervalMs: 1000))
                let session = try await app.startCall(devId: f.devId)
                #expect(await phaseOf(app, becomes: .answered, within: .seconds(20)))
                try await app.openVideo(sessionId: session)
                #expect(await eventually(timeout: .seconds(30)) { (try? await camera()?["state"]?.string) == "live" })

                fake.unplug(Self.path)
                #expect(await eventually(timeout: .seconds(30)) { (try? await camera()?["state"]?.string) == "lost" })
                let lost = try await metrics()
                #expect(lost.value("ipcemu_camera_up", d) == 0)
                #expect(lost.value("ipcemu_camera_losses_total", d) == 1)
                let lostJSON = try await camera()
                #expect(lostJSON?["losses"]?.int == 1)
                #expect(lostJSON?["detail"]?.string?.isEmpty == false, "the reason there is no video")
                #expect(await f.phase() == .answered)

                fake.plug(Self.path)
                #expect(await eventually(timeout: .seconds(30)) { (try? await camera()?["state"]?.string) == "live" })
                let back = try await metrics()
                #expect(back.value("ipcemu_camera_up", d) == 1)
                #expect(back.value("ipcemu_camera_losses_total", d) == 1, "one unplug is one loss, however many retries it took")
                #expect(try await camera()?["losses"]?.int == 1)

                await app.stop()
                await f.device.stop()
                // The capture thread calls the fake driver until the feed has closed the camera.
                #expect(await eventually(timeout: .seconds(20)) { feeds.counts.captures == 0 && fake.openCount == 0 })
            }
            withExtendedLifetime(fake) {}
        }
    }
}
