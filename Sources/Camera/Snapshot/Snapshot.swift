/// Still images of frames: JPEG or PNG through GStreamer (appsrc ! decoder ! videoconvert !
/// jpegenc/pngenc ! appsink), and back (for tests and the app simulator).
public enum Snapshot {
    public enum ImageFormat: String, Sendable {
        case jpeg, png

        /// From a file name's extension: .jpg/.jpeg or .png.
        public init?(path: String) {
            let lower = path.lowercased()
            if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") { self = .jpeg }
            else if lower.hasSuffix(".png") { self = .png }
            else { return nil }
        }
    }

    /// Encodes one frame (raw, MJPEG, an H.264 IDR access unit with its SPS/PPS, or an H.265 key
    /// frame with its VPS/SPS/PPS).
    public static func encode(_ frame: Frame, as image: ImageFormat, jpegQuality: Int = 90) throws(CameraError) -> [UInt8] {
        if frame.format == .h264 || frame.format == .h265, !frame.isKeyFrame {
            throw .encoder("a snapshot of an \(frame.format == .h264 ? "H.264" : "H.265") stream needs a key frame")
        }
        let encoder = image == .jpeg ? "jpegenc quality=\(min(100, max(1, jpegQuality)))" : "pngenc"
        let caps = FrameCaps.caps(format: frame.format, width: frame.width, height: frame.height)
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! \(FrameCaps.decoder(for: frame.format))"
                + "videoconvert ! \(encoder) ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        try pipeline.push(FrameCaps.gstreamerBytes(frame), ptsNs: 0, durationNs: 33_333_333)
        try pipeline.endOfStream()
        guard let sample = try pipeline.pull(timeoutNs: 10_000_000_000), !sample.bytes.isEmpty else {
            throw .encoder("the encoder produced no image")
        }
        return sample.bytes
    }

    /// Decodes a JPEG or PNG image to I420 (with GStreamer's row strides in the sample).
    public static func decode(_ bytes: [UInt8], format image: ImageFormat) throws(CameraError) -> GStreamerSample {
        let (caps, decoder) = image == .jpeg ? ("image/jpeg", "jpegdec") : ("image/png", "pngdec")
        let pipeline = try GStreamerPipeline(
            "appsrc name=src caps=\(caps) ! \(decoder) ! videoconvert ! video/x-raw,format=I420 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        try pipeline.push(bytes, ptsNs: 0)
        try pipeline.endOfStream()
        guard let sample = try pipeline.pull(timeoutNs: 10_000_000_000) else {
            throw .encoder("the decoder produced no picture")
        }
        return sample
    }
}
