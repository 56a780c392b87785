import Camera
import Foundation
import Testing
import TestSupport
import WebRTCLink

/// A webcam's frames (MJPEG or YUYV, at the capture size) go out decoded, scaled to the stream's
/// size and encoded; the stamp survives the whole way (PROTOCOL.md 6).
@Suite("Captured camera frames (MJPEG, YUYV)", .serialized, .heavy)
struct CapturedFramesTests {
    /// Stamped pattern frames at 640x360, converted to what a camera would deliver.
    static func frames(_ format: CapturedFormat, count: Int) throws -> [[UInt8]] {
        var generator = try TestPatternGenerator(width: 640, height: 360)
        var out: [[UInt8]] = []
        for i in 0..<count {
            let frame = generator.nextFrame(unixMs: 1_800_000_000_000 + Int64(i) * 33, timestampNs: UInt64(i) * 33_333_333)
            switch format {
            case .mjpeg: out.append(try Snapshot.encode(frame, as: .jpeg, jpegQuality: 85))
            case .yuyv: out.append(Self.yuyv(fromI420: frame.bytes, width: 640, height: 360))
            case .nv12, .i420: out.append([])
            }
        }
        return out
    }

    static func yuyv(fromI420 i420: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: w * h * 2)
        let uBase = w * h, vBase = uBase + (w / 2) * (h / 2)
        for y in 0..<h {
            for x in stride(from: 0, to: w, by: 2) {
                let o = (y * w + x) * 2
                let c = (y / 2) * (w / 2) + x / 2
                out[o] = i420[y * w + x]
                out[o + 1] = i420[uBase + c]
                out[o + 2] = i420[y * w + x + 1]
                out[o + 3] = i420[vBase + c]
            }
        }
        return out
    }

    /// At the capture size the stamp reads back exactly; scaled to half size the frames arrive at
    /// the stream's size (the stamp's 16 rows become 8, so it is not read there).
    @Test(arguments: [(CapturedFormat.mjpeg, 640), (.yuyv, 640), (.mjpeg, 320), (.yuyv, 320)])
    func capturedFramesArrive(format: CapturedFormat, sendWidth: Int) async throws {
        let sendHeight = sendWidth * 360 / 640
        let frames = try Self.frames(format, count: 30)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(offer: offer, media: SendMedia(
            video: VideoFormat(width: sendWidth, height: sendHeight, fps: 30),
            videoInput: .capturedFrames(format, width: 640, height: 360)))
        let answerer = try #require(harness.answerer)
        #expect(!answerer.pushVideoFrame([UInt8](repeating: 0, count: sendWidth * sendHeight * 3 / 2),
                                         width: sendWidth, height: sendHeight, ptsNanos: 0))
        if format == .yuyv {
            #expect(!answerer.pushCapturedFrame([1, 2, 3], ptsNanos: 0), "a YUYV frame of the wrong size is refused")
        }
        var pts: Int64 = 1_000_000_000
        var index = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.framesReceivedByOfferer < 30 && ContinuousClock.now < deadline {
            answerer.pushCapturedFrame(frames[index % frames.count], ptsNanos: pts)
            index += 1
            pts += 33_333_333
            try await Task.sleep(for: .milliseconds(33))
        }
        #expect(harness.framesReceivedByOfferer >= 30, "\(harness.diagnostics)")
        let decoded = try #require(harness.lastFrame)
        #expect(decoded.width == sendWidth && decoded.height == sendHeight)
        if sendWidth == 640 {
            let stamp = try LatencyStamp.read(luma: decoded.luma, width: decoded.width, height: decoded.height, stride: decoded.stride)
            #expect(stamp.captureTimeMs >= 1_800_000_000_000 && stamp.captureTimeMs < 1_800_000_000_000 + 30 * 33)
            #expect(stamp.counter < 30)
        }
    }
}
