/// A JPEG that fits a byte budget (PROTOCOL.md 8.5: a press or motion snapshot is at most 100,000
/// bytes, quality lowered until it fits).
public struct BoundedJPEG: Sendable, Equatable {
    /// The JPEG file's bytes; never more than the budget asked for.
    public var bytes: [UInt8]
    /// The `jpegenc` quality (1-100) it was encoded at.
    public var quality: Int
    /// The picture's size: the frame's own, unless even quality 1 did not fit and it was scaled down.
    public var width: Int
    public var height: Int
}

extension Snapshot {
    /// The quality tried first: the JPEG of an ordinary camera picture at this quality fits in
    /// 100,000 bytes at 1280x720, so one encode is the common case.
    public static let preferredJPEGQuality = 85

    /// Encodes `frame` as a JPEG of at most `maxBytes` bytes: the highest quality (up to
    /// `preferredJPEGQuality`) that fits, found by bisection; when even quality 1 is too big, the
    /// picture is halved (both sides, even sizes) and the search repeats, down to 64x36 at the
    /// least. A compressed frame (MJPEG, an H.264 or H.265 key frame) is decoded once. Throws
    /// when `maxBytes` is below 1,000 (no JPEG reliably fits) or nothing fits.
    public static func boundedJPEG(of frame: Frame, maxBytes: Int = 100_000) throws(CameraError) -> BoundedJPEG {
        guard maxBytes >= 1_000 else { throw .invalidConfig("a JPEG budget of \(maxBytes) bytes: needs at least 1000") }
        guard frame.width > 0, frame.height > 0 else {
            throw .invalidConfig("a snapshot of a \(frame.width)x\(frame.height) frame")
        }
        let raw = try rawPicture(of: frame)
        var (width, height) = (raw.width, raw.height)
        while true {
            let encoder = ScaledJPEGEncoder(raw: raw, width: width, height: height)
            // Most pictures fit at once.
            let first = try encoder.encode(quality: preferredJPEGQuality)
            if first.count <= maxBytes {
                return BoundedJPEG(bytes: first, quality: preferredJPEGQuality, width: width, height: height)
            }
            // Bisection over 1...preferred-1 for the highest quality that fits.
            var best: (bytes: [UInt8], quality: Int)?
            var low = 1, high = preferredJPEGQuality - 1
            while low <= high {
                let mid = (low + high) / 2
                let bytes = try encoder.encode(quality: mid)
                if bytes.count <= maxBytes {
                    best = (bytes, mid)
                    low = mid + 1
                } else {
                    high = mid - 1
                }
            }
            if let best { return BoundedJPEG(bytes: best.bytes, quality: best.quality, width: width, height: height) }
            let (nextWidth, nextHeight) = ((width / 2) & ~1, (height / 2) & ~1)
            guard nextWidth >= 64, nextHeight >= 36 else {
                throw .encoder("no JPEG of this frame fits in \(maxBytes) bytes, even at quality 1 and \(width)x\(height)")
            }
            (width, height) = (nextWidth, nextHeight)
        }
    }

    /// The frame as raw video `videoconvert` takes: raw frames as they are; MJPEG and H.264/H.265
    /// key frames decoded once to I420.
    static func rawPicture(of frame: Frame) throws(CameraError) -> Frame {
        guard frame.format.isCompressed else { return frame }
        if frame.format == .h264 || frame.format == .h265, !frame.isKeyFrame {
            throw .encoder("a snapshot of an \(frame.format == .h264 ? "H.264" : "H.265") stream needs a key frame")
        }
        // An encoded frame's size comes from its own parameter sets (a camera or clip passed
        // through may not be the size its profile says), so the caps leave it out.
        let caps = switch frame.format {
        case .h264: "video/x-h264,stream-format=byte-stream,alignment=au"
        case .h265: "video/x-h265,stream-format=byte-stream,alignment=au"
        default: FrameCaps.caps(format: frame.format, width: frame.width, height: frame.height)
        }
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! \(FrameCaps.decoder(for: frame.format))"
                + "videoconvert ! video/x-raw,format=I420 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        try pipeline.push(frame.bytes, ptsNs: 0, durationNs: 33_333_333)
        try pipeline.endOfStream()
        guard let sample = try pipeline.pull(timeoutNs: 10_000_000_000), sample.width > 0, sample.height > 0 else {
            throw .encoder("the decoder produced no picture")
        }
        return Frame(format: .i420, width: sample.width, height: sample.height, bytes: sample.tightI420(),
                     captureTimeMs: frame.captureTimeMs, timestampNs: frame.timestampNs, sequence: frame.sequence)
    }
}

/// One raw picture encoded at a given size and any quality (a pipeline per encode: a snapshot is
/// a handful of encodes per press, never a running encoder).
private struct ScaledJPEGEncoder {
    let raw: Frame
    let width: Int
    let height: Int

    func encode(quality: Int) throws(CameraError) -> [UInt8] {
        let caps = FrameCaps.caps(format: raw.format, width: raw.width, height: raw.height)
        let scale = width == raw.width && height == raw.height
            ? "" : "videoscale ! video/x-raw,width=\(width),height=\(height),pixel-aspect-ratio=1/1 ! "
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! videoconvert ! \(scale)"
                + "jpegenc quality=\(min(100, max(1, quality))) ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        try pipeline.push(FrameCaps.gstreamerBytes(raw), ptsNs: 0, durationNs: 33_333_333)
        try pipeline.endOfStream()
        guard let sample = try pipeline.pull(timeoutNs: 10_000_000_000), !sample.bytes.isEmpty else {
            throw .encoder("the encoder produced no image")
        }
        return sample.bytes
    }
}
