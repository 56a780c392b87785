/// Whether a source is delivering video.
public enum FrameSourceStatus: Sendable, Equatable, CustomStringConvertible {
    /// Frames are flowing (sent once after start, and again after each recovery).
    case live(description: String)
    /// No video, and why; the source keeps retrying until it is stopped.
    case noVideo(reason: String)
    /// `stop()` was called; nothing follows.
    case stopped

    public var description: String {
        switch self {
        case .live(let what): return "live (\(what))"
        case .noVideo(let reason): return "no video: \(reason)"
        case .stopped: return "stopped"
        }
    }
}

/// What a source hands its consumer, in order, on the source's own thread.
public enum FrameSourceEvent: Sendable {
    case frame(Frame)
    case status(FrameSourceStatus)
}

/// Anything that produces frames: a V4L2 camera, the stamped test pattern, a looped H.264 clip.
/// A new kind of source is a new file conforming to this.
///
/// `start` returns at once; the source calls `sink` from a thread of its own (never concurrently),
/// first `.status(.live)` or `.status(.noVideo)`, then frames. `stop` is idempotent and returns
/// once the sink will not be called again (except for the final `.status(.stopped)`, which it
/// delivers before returning). A source is started at most once.
public protocol FrameSource: AnyObject, Sendable {
    /// A short human description ("test pattern 1280x720@30", "v4l2 /dev/video0").
    var name: String { get }
    func start(_ sink: @escaping @Sendable (FrameSourceEvent) -> Void) throws(CameraError)
    func stop()
}

extension FrameSource {
    /// Starts the source and delivers its events as an async stream, keeping the newest
    /// `bufferingNewest` when the reader falls behind; ending the iteration stops the source.
    public func events(bufferingNewest: Int = 8) throws(CameraError) -> AsyncStream<FrameSourceEvent> {
        let (stream, continuation) = AsyncStream<FrameSourceEvent>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferingNewest))
        try start { event in
            continuation.yield(event)
            if case .status(.stopped) = event { continuation.finish() }
        }
        continuation.onTermination = { [weak self] _ in self?.stop() }
        return stream
    }
}

/// Why a source could not start or lost its video.
public enum CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidConfig(String)
    case alreadyStarted
    case v4l2(V4L2Error)
    case clip(String)
    case encoder(String)

    public var description: String {
        switch self {
        case .invalidConfig(let why): return "invalid camera config: \(why)"
        case .alreadyStarted: return "the source was already started"
        case .v4l2(let error): return error.description
        case .clip(let why): return "clip: \(why)"
        case .encoder(let why): return "encoder: \(why)"
        }
    }
}
