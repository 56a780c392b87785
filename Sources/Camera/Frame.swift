/// How a frame's bytes are laid out.
public enum PixelFormat: String, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    /// Planar 4:2:0: Y (width x height), then U and V ((width+1)/2 x (height+1)/2), no padding.
    case i420 = "I420"
    /// Y plane, then one interleaved UV plane ((width+1)/2 pairs x (height+1)/2 rows), no padding.
    case nv12 = "NV12"
    /// Packed 4:2:2, Y0 U Y1 V per two pixels, `2 * width` bytes a row.
    case yuyv = "YUYV"
    /// One JPEG image per frame.
    case mjpeg = "MJPEG"
    /// One H.264 access unit in Annex-B form (start codes); SPS and PPS precede every IDR.
    case h264 = "H264"
    /// One H.265 access unit in Annex-B form; VPS, SPS and PPS precede every key frame (an H.265
    /// clip or V4L2 camera passed through to the `fmp4Stream` data channel, PROTOCOL.md 7).
    case h265 = "H265"

    public var description: String { rawValue }

    /// True for the formats a camera delivers already compressed.
    public var isCompressed: Bool { self == .mjpeg || self == .h264 || self == .h265 }

    /// The byte count of one raw frame, or nil for compressed formats.
    public func rawFrameSize(width: Int, height: Int) -> Int? {
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        switch self {
        case .i420, .nv12: return width * height + 2 * chroma
        case .yuyv: return 2 * width * height
        case .mjpeg, .h264, .h265: return nil
        }
    }
}

/// One captured picture (or H.264 access unit) and when it was taken.
public struct Frame: Sendable {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]
    /// When the frame was captured: unix time in milliseconds, on the real (wall) clock.
    public var captureTimeMs: Int64
    /// Presentation time since the source started, in nanoseconds: monotonic, and seamless across
    /// a clip's loop boundaries and a camera's reconnections (what an RTP timestamp derives from).
    public var timestampNs: UInt64
    /// Counts every captured frame from 0 (the test pattern stamps it modulo 4096); a gap means the
    /// source (or the camera driver) dropped frames.
    public var sequence: UInt64
    /// An H.264 IDR access unit (with SPS and PPS in front) or an H.265 IRAP access unit (with VPS,
    /// SPS and PPS in front); always true for raw and JPEG frames.
    public var isKeyFrame: Bool

    public init(
        format: PixelFormat, width: Int, height: Int, bytes: [UInt8], captureTimeMs: Int64,
        timestampNs: UInt64, sequence: UInt64, isKeyFrame: Bool = true
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
        self.captureTimeMs = captureTimeMs
        self.timestampNs = timestampNs
        self.sequence = sequence
        self.isKeyFrame = isKeyFrame
    }
}
