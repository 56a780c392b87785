import AppSimulator
import Camera
import CameraTestSupport
import DeviceProfile
@testable import Emulator
import Foundation
import Testing

extension EndToEnd {
    /// PROTOCOL.md 7 with an H.265 clip as the camera: its access units go over the `fmp4Stream`
    /// data channel as they are (no encoder in the device).
    @Suite("HEVC clip passed through over fmp4Stream (7)")
    struct HEVCClip {
        @Test("an H.265 clip of the stamped pattern: every segment decoded, every stamp read, no encoder", .timeLimit(.minutes(8)))
        func clipCall() async throws {
            let units = try await H265ClipEncoder.encodeAccessUnits(count: 60, width: 320, height: 180, fps: 15, keyInterval: 15)
            // A short encode would make a clip that loops early or does not open: named here.
            try #require(units.count == 60, "x265 gave \(units.count) access units of 60")
            let data = units.reduce(into: [UInt8]()) { $0 += $1 }
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-e2e-\(getpid())-\(UUID().uuidString).hevc").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(data)))
            defer { try? FileManager.default.removeItem(atPath: path) }
            try await withHarness(edit: { p in
                HEVCDataChannel.lightHEVCProfile(&p)
                p.camera = .clip(DeviceProfile.ClipFile(path: path, fps: 15))
            }) { h in
                // 75 frames at 15 fps: the 60-frame clip loops at least once.
                let (alice, _, stats, report) = try await HEVCStreamCheck.passThroughCall(h, frames: 75, minimumKeyFrames: 5)
                // 0 dropped within the loop: each counter is the one before plus 1, modulo the
                // clip's 60 frames (the counter starts again when the clip loops).
                let counters = stats.stamps.map { Int($0.counter) }
                #expect(zip(counters, counters.dropFirst()).allSatisfy { ($0 + 1) % 60 == $1 }, "\(counters)")
                #expect(counters.contains(59) && counters.contains(0))
                // The loop is a counter that starts again, not 4,036 drops; the clip's stamps are
                // from when it was encoded, so they give no latency.
                #expect(stats.framesDropped == 0 && stats.counterRestarts >= 1 && stats.latenciesMs.isEmpty, "\(stats.summary)")
                // The feed is the clip passed through: frames taken, no encoder, no error.
                let feeds = h.device.feeds.feeds(keyContaining: path)
                #expect(feeds.count == 1)
                #expect(feeds.allSatisfy { $0.isPassThrough && $0.encoderStats == nil && $0.error == nil })
                print("HEVC clip over fmp4Stream: \(stats.summary); \(report.mediaSegments) segments, \(report.keyFrames) key")
                try await alice.hangUp()
            }
        }
    }
}
