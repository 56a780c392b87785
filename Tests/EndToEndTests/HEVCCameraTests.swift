import AppSimulator
import Camera
import CameraTestSupport
import DeviceProfile
@testable import Emulator
import Foundation
import Testing

extension EndToEnd {
    /// PROTOCOL.md 7 with an H.265 V4L2 camera (`format: h265`): the fake driver behind the
    /// injectable ioctl table delivers real stamped x265 access units, one a buffer, and the device
    /// passes them through to the `fmp4Stream` data channel (no encoder).
    @Suite("HEVC V4L2 camera passed through over fmp4Stream (7)")
    struct HEVCCamera {
        static let path = "/dev/video-hevc-e2e"

        @Test("a fake H.265 camera: every segment decoded, every stamp read, 0 dropped, no encoder", .timeLimit(.minutes(8)))
        func cameraCall() async throws {
            // 300 frames at 15 fps: 20 s before the camera's payloads loop, longer than the call.
            let encoded = try await H265ClipEncoder.encodeAccessUnits(count: 300, width: 320, height: 180, fps: 15, keyInterval: 15)
            try #require(encoded.count == 300)
            // Like many cameras, parameter sets only with the first key frame: the source puts them
            // in front of every later one.
            func isSet(_ unit: H264AnnexB.NALUnit) -> Bool { (32...34).contains((unit.bytes[unit.bytes.startIndex] >> 1) & 0x3F) }
            let payloads = [encoded[0]] + encoded.dropFirst().map { H264AnnexB.annexB(H264AnnexB.nalUnits($0).filter { !isSet($0) }) }
            let camera = FakeV4L2.Camera(path: Self.path, card: "Fake HEVC Cam", offers: [
                .init(fourcc: PixelFormat.mjpeg.v4l2FourCC, sizes: [(320, 180)], fps: [15]),
                .init(fourcc: PixelFormat.h265.v4l2FourCC, sizes: [(320, 180)], fps: [15]),
            ])
            camera.framesPerSecond = 15
            camera.payloads = payloads
            let fake = FakeV4L2([camera])
            let feeds = VideoFeeds(v4l2Driver: fake.driver)
            feeds.linger = .milliseconds(50)

            try await withHarness(edit: { p in
                HEVCDataChannel.lightHEVCProfile(&p)
                p.camera = .v4l2(DeviceProfile.V4L2Camera(device: Self.path, format: .h265, width: 320, height: 180, fps: 15))
            }, feeds: feeds) { h in
                let (alice, _, stats, report) = try await HEVCStreamCheck.passThroughCall(h, frames: 60, minimumKeyFrames: 4)
                #expect(stats.framesDropped == 0, "\(stats.summary)")
                let counters = stats.stamps.map { Int($0.counter) }
                #expect(zip(counters, counters.dropFirst()).allSatisfy { $0 + 1 == $1 }, "\(counters)")
                // The feed is the camera passed through: one open of the camera, frames taken, no encoder.
                let passed = h.device.feeds.feeds(keyContaining: Self.path)
                #expect(passed.count == 1)
                #expect(passed.allSatisfy { $0.isPassThrough && $0.encoderStats == nil && $0.error == nil })
                #expect(fake.openCount == 1)
                print("HEVC V4L2 camera over fmp4Stream: \(stats.summary); \(report.mediaSegments) segments, \(report.keyFrames) key")
                try await alice.hangUp()
            }
            // The capture thread calls the fake driver until the feed has closed the camera.
            let deadline = ContinuousClock.now + .seconds(10)
            while feeds.counts.captures > 0 || fake.openCount > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(fake.openCount == 0)
            withExtendedLifetime(fake) {}
        }
    }
}
