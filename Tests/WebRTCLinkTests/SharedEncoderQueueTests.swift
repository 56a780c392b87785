import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 5: the shared encoder's appsrc holds the frames it was configured for. With
/// appsrc's default `max-bytes` (200,000) it held one 720p I420 frame (1,382,400 bytes) and
/// dropped every frame pushed while that one waited: a counter gap in every stream of the feed
/// whenever the encoder's thread was a frame late (its start, a loaded machine).
@Suite("Shared encoder queue", .heavy)
struct SharedEncoderQueueTests {
    @Test("a burst of 720p frames that fits the encoder's queue is encoded whole, none dropped", .timeLimit(.minutes(8)))
    func burstIsNotDropped() async throws {
        let video = VideoFormat(width: 1280, height: 720, fps: 30)
        let encoder = try SharedH264Encoder(video: video, input: .i420, keyFrameIntervalSeconds: 10)
        try encoder.start()
        defer { encoder.stop() }
        let received = Mutex(0)
        _ = encoder.fanOut.subscribe { _, _ in received.withLock { $0 += 1 } }
        // Pushed back to back, faster than x264 takes them (its first frame alone takes longer):
        // all of them wait in the appsrc and the queue after it.
        let burst = PipelineDescriptions.sharedEncoderQueuedFrames
        var frame = [UInt8](repeating: 128, count: WebRTCAnswerer.i420Size(width: video.width, height: video.height))
        for n in 0..<burst {
            frame[n] = UInt8(n)
            #expect(encoder.push(frame))
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while received.withLock({ $0 }) < burst, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(received.withLock { $0 } == burst, "access units out for \(burst) frames in")
        #expect(encoder.stats.accessUnitsOut == burst)
        #expect(encoder.stats.framesDropped == 0)
    }

    @Test("a burst several times the queue: the frames dropped at the encoder's input are counted, and with the units out they make up every frame in", .timeLimit(.minutes(8)))
    func overflowIsCounted() async throws {
        let video = VideoFormat(width: 1280, height: 720, fps: 30)
        let encoder = try SharedH264Encoder(video: video, input: .i420, keyFrameIntervalSeconds: 10)
        try encoder.start()
        defer { encoder.stop() }
        // Five times what the queue holds, back to back: x264's first frame alone takes longer
        // than the pushes, so the queue fills and the rest are dropped.
        let burst = PipelineDescriptions.sharedEncoderQueuedFrames * 5
        var frame = [UInt8](repeating: 128, count: WebRTCAnswerer.i420Size(width: video.width, height: video.height))
        var refused = 0
        for n in 0..<burst {
            frame[n] = UInt8(n)
            if !encoder.push(frame) { refused += 1 }
        }
        // Done when every frame is accounted for: encoded, or counted as dropped.
        let deadline = ContinuousClock.now + .seconds(20)
        while encoder.stats.accessUnitsOut + encoder.stats.framesDropped < burst, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let stats = encoder.stats
        #expect(stats.framesIn == burst)
        #expect(stats.framesDropped > 0, "\(stats)")
        #expect(stats.framesDropped == refused, "\(stats)")
        #expect(stats.accessUnitsOut + stats.framesDropped == burst, "\(stats)")
    }
}
