import Camera

/// Reads back what an encoded stream carries: H.264 or H.265 frames through GStreamer's parser and
/// decoder, then the stamp of every decoded picture (PROTOCOL.md 6).
public enum StampDecoding {
    /// The frame counters of the decoded pictures, in order. `format` is `.h264` or `.h265`.
    public static func counters(_ frames: some Sequence<Frame>, format: PixelFormat, width: Int, height: Int,
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
}
