import Camera
import Testing
import TestSupport

/// The stamp survives real lossy coding: test pattern -> x264enc -> avdec_h264 (real GStreamer).
@Suite("Stamp through H.264", .serialized, .heavy)
struct EncodeRoundTripTests {
    static let encoder = "x264enc tune=zerolatency speed-preset=ultrafast bitrate=1500 key-int-max=30"

    /// Encodes the frames and decodes them again; returns the decoded samples in order (it blocks:
    /// callers run it `offThePool`).
    static func roundTrip(_ frames: [Frame], width: Int, height: Int) throws -> [GStreamerSample] {
        let caps = FrameCaps.caps(format: .i420, width: width, height: height, fps: 30)
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! \(encoder) ! h264parse ! avdec_h264 ! "
                + "videoconvert ! video/x-raw,format=I420 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        for (i, frame) in frames.enumerated() {
            try pipeline.push(FrameCaps.gstreamerBytes(frame), ptsNs: UInt64(i) * 33_333_333, durationNs: 33_333_333)
        }
        try pipeline.endOfStream()
        var out: [GStreamerSample] = []
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) { out.append(sample) }
        return out
    }

    @Test("every stamp reads back exactly after encode and decode")
    func everyStampReadsBack() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "avdec_h264", "h264parse"]),
                     "GStreamer x264enc/avdec_h264 missing: run scripts/install-deps.sh")
        var generator = try TestPatternGenerator(width: 640, height: 360)
        let base = Clocks.unixMs()
        let frames = (0..<60).map { generator.nextFrame(unixMs: base + Int64($0) * 33, timestampNs: UInt64($0) * 33_333_333) }
        let decoded = try await offThePool { try Self.roundTrip(frames, width: 640, height: 360) }
        #expect(decoded.count == 60)
        for (frame, sample) in zip(frames, decoded) {
            let stamp = try sample.readStamp()
            #expect(stamp == LatencyStamp(unixMs: frame.captureTimeMs, sequence: frame.sequence))
        }
    }

    @Test("the counter reveals a dropped frame")
    func droppedFrameShows() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "avdec_h264"]))
        var generator = try TestPatternGenerator(width: 320, height: 240)
        let base = Clocks.unixMs()
        var frames = (0..<20).map { generator.nextFrame(unixMs: base + Int64($0) * 33, timestampNs: UInt64($0) * 33_333_333) }
        frames.remove(at: 12)  // captured, never sent
        let decoded = try await offThePool { [frames] in try Self.roundTrip(frames, width: 320, height: 240) }
        let counters = try decoded.map { try $0.readStamp().counter }
        #expect(counters.count == 19)
        let gaps = zip(counters, counters.dropFirst()).enumerated().compactMap { i, pair -> (Int, Int)? in
            let missing = LatencyStamp.framesMissing(between: pair.0, and: pair.1)
            return missing > 0 ? (i, missing) : nil
        }
        #expect(gaps.count == 1)
        #expect(gaps.first?.1 == 1)
        #expect(counters[11] == 11 && counters[12] == 13)
    }
}
