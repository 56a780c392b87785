import Foundation

/// A camera as a device profile describes it: which source, what size and rate. The profile's
/// camera section maps onto this; the CLI builds it from `--camera`, `--size`, `--fps`.
public struct CameraConfig: Sendable, Equatable {
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// The stamped synthetic camera (PROTOCOL.md section 6).
        case testPattern
        /// A V4L2 device, by path or by card name.
        case v4l2(V4L2Source.Device)
        /// An H.264 Annex-B file, looped.
        case clip(path: String)

        public var description: String {
            switch self {
            case .testPattern: return "test-pattern"
            case .v4l2(.path(let path)): return "v4l2:\(path)"
            case .v4l2(.name(let name)): return "v4l2-name:\(name)"
            case .clip(let path): return "clip:\(path)"
            }
        }
    }

    public var kind: Kind
    public var width: Int
    public var height: Int
    public var fps: Double
    /// V4L2 only: a format to prefer (`.h264` or `.h265` asks for pass-through); nil lets the source pick
    /// (MJPEG, YUYV, NV12, I420).
    public var preferredFormat: PixelFormat?

    public init(kind: Kind = .testPattern, width: Int = 1280, height: Int = 720, fps: Double = 30,
                preferredFormat: PixelFormat? = nil) {
        self.kind = kind
        self.width = width
        self.height = height
        self.fps = fps
        self.preferredFormat = preferredFormat
    }

    /// Parses a camera spec: `test-pattern`, `v4l2:/dev/video0`, `v4l2:NAME` (a card name, when it
    /// does not start with '/'), `v4l2-name:NAME`, `clip:FILE.h264`.
    public static func parseKind(_ spec: String) throws(CameraError) -> Kind {
        if spec == "test-pattern" || spec == "pattern" { return .testPattern }
        if spec.hasPrefix("v4l2-name:") {
            let name = String(spec.dropFirst("v4l2-name:".count))
            guard !name.isEmpty else { throw .invalidConfig("empty camera name in \"\(spec)\"") }
            return .v4l2(.name(name))
        }
        if spec.hasPrefix("v4l2:") {
            let rest = String(spec.dropFirst("v4l2:".count))
            guard !rest.isEmpty else { throw .invalidConfig("empty device in \"\(spec)\"") }
            return .v4l2(rest.hasPrefix("/") ? .path(rest) : .name(rest))
        }
        if spec.hasPrefix("/dev/video") { return .v4l2(.path(spec)) }
        if spec.hasPrefix("clip:") {
            let path = String(spec.dropFirst("clip:".count))
            guard !path.isEmpty else { throw .invalidConfig("empty file in \"\(spec)\"") }
            return .clip(path: path)
        }
        throw .invalidConfig("camera \"\(spec)\": expected test-pattern, v4l2:/dev/videoN, v4l2:NAME or clip:FILE")
    }

    /// Which codec a clip holds: `.h265`/`.hevc`/`.265` files are H.265, `.h264`/`.264` files
    /// H.264; any other name is sniffed from its first NAL unit header (`H265Clip.looksLikeH265`).
    public static func clipIsH265(_ path: String) throws(CameraError) -> Bool {
        let ext = (path as NSString).pathExtension.lowercased()
        if ["h265", "hevc", "265"].contains(ext) { return true }
        if ["h264", "264"].contains(ext) { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .clip("cannot read \(path)") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 4096)) ?? nil
        return H265Clip.looksLikeH265([UInt8](head ?? Data()))
    }

    /// Parses "1280x720".
    public static func parseSize(_ text: String) throws(CameraError) -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= 16384, h <= 16384 else {
            throw .invalidConfig("size \"\(text)\": expected WIDTHxHEIGHT, for example 1280x720")
        }
        return (w, h)
    }

    /// Makes the source this config describes (not started).
    public func makeSource(v4l2Driver: V4L2Driver = .system) throws(CameraError) -> any FrameSource {
        guard fps > 0, fps.isFinite else { throw .invalidConfig("fps \(fps) must be positive") }
        switch kind {
        case .testPattern:
            return try TestPatternSource(width: width, height: height, fps: fps)
        case .v4l2(let device):
            return V4L2Source(
                device: device,
                request: V4L2Negotiation.Request(width: width, height: height, fps: fps, format: preferredFormat),
                driver: v4l2Driver)
        case .clip(let path):
            if try Self.clipIsH265(path) {
                // Paced at the configured rate (the clip's VUI timing is not read).
                let clip = try H265Clip.shared(contentsOfFile: path)
                return try ClipLoopSource(h265: clip, width: width, height: height, fps: fps, label: path)
            }
            // The clip's own rate (SPS timing) when it states one, else the configured rate.
            let clip = try H264Clip.shared(contentsOfFile: path)
            return try ClipLoopSource(clip: clip, fps: clip.fps == nil ? fps : nil, label: path)
        }
    }
}
