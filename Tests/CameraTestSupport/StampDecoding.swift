import Camera
import TestSupport

/// Reads back what an encoded stream carries: H.264 or H.265 frames through GStreamer's parser and
/// decoder, then the stamp of every decoded picture (PROTOCOL.md 6).
public enum StampDecoding {
    /// The frame counters of the decoded pictures, in order. `format` is `.h264` or `.h265`.
    /// The decoding runs on a thread of its own (`offThePool`): its pulls block.
    public static func counters(_ frames: some Sequence<Frame>, format: PixelFormat, width: Int, height: Int,
                                fps: Double) async throws -> [UInt16] {
        let frames = Array(frames)
        return try await offThePool { try decodeCounters(frames, format: format, width: width, height: height, fps: fps) }
    }

    private static func decodeCounters(_ frames: [Frame], format: PixelFormat, width: Int, height: Int,
                                       fps: Double) throws -> [UInt16] {
        let codec = format == .h265 ? "h265" : "h264"
        let caps = FrameCaps.caps(format: format, width: width, height: height, fps: fps)
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! \(codec)parse ! avdec_\(codec) ! videoconvert ! "
                + "video/x-raw,format=I420 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        for frame in frames { try pipeline.push(frame.bytes, ptsNs: frame.timestampNs, durationNs: 5_000_000) }
        try pipeline.endOfStream()
        var counters: [UInt16] = []
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) { counters.append(try sample.readStamp().counter) }
        return counters
    }

    /// The decoded pictures of an MP4's H.264 video track (a left message, PROTOCOL.md 8.5): stamp
    /// counters and presentation times, in order.
    public static func mp4Video(_ path: String) async throws -> (counters: [UInt16], ptsNs: [UInt64]) {
        try await offThePool { try decodeMP4Video(path) }
    }

    private static func decodeMP4Video(_ path: String) throws -> (counters: [UInt16], ptsNs: [UInt64]) {
        let pipeline = try GStreamerPipeline(
            "filesrc location=\"\(path)\" ! qtdemux name=d d.video_0 ! queue ! h264parse ! avdec_h264 ! videoconvert ! "
                + "video/x-raw,format=I420 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        var counters: [UInt16] = []
        var pts: [UInt64] = []
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) {
            counters.append(try sample.readStamp().counter)
            pts.append(sample.ptsNs ?? 0)
        }
        return (counters, pts)
    }
}
