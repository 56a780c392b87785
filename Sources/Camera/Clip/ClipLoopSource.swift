import Synchronization

/// A pre-encoded H.264 or H.265 clip played in a loop, in real time, as access units: no encoder
/// at all, so one clip can feed any number of calls (DESIGN.md "Scale"). Access unit n goes out at
/// start + n/fps (absolute deadlines); timestamps and sequence numbers keep counting across the
/// loop boundary, and since the clip starts at a key frame (with its parameter sets), the stream
/// stays decodable.
public final class ClipLoopSource: FrameSource {
    public let accessUnits: [H264Clip.AccessUnit]
    /// `.h264` or `.h265`.
    public let format: PixelFormat
    public let width: Int
    public let height: Int
    public let fps: Double
    private let label: String
    private let worker: SourceWorker
    private let sinkBox = Mutex<(@Sendable (FrameSourceEvent) -> Void)?>(nil)

    /// `fps` nil uses the clip's own rate (SPS timing), else 30.
    public convenience init(clip: H264Clip, fps: Double? = nil, label: String = "clip") throws(CameraError) {
        try self.init(accessUnits: clip.accessUnits, format: .h264, width: clip.width, height: clip.height,
                      fps: fps ?? clip.fps ?? 30, label: label)
    }

    /// An H.265 clip: its frames carry the nominal size given here (the stream's configured
    /// size); the real size is in the clip's SPS, which the fMP4 writer reads (PROTOCOL.md 7).
    public convenience init(h265 clip: H265Clip, width: Int, height: Int, fps: Double, label: String = "clip") throws(CameraError) {
        try self.init(accessUnits: clip.accessUnits, format: .h265, width: width, height: height, fps: fps, label: label)
    }

    private init(accessUnits: [H264Clip.AccessUnit], format: PixelFormat, width: Int, height: Int, fps rate: Double,
                 label: String) throws(CameraError) {
        guard rate > 0, rate <= 1000, rate.isFinite else { throw .invalidConfig("clip fps \(rate)") }
        guard !accessUnits.isEmpty else { throw .clip("\(label) has no access units") }
        self.accessUnits = accessUnits
        self.format = format
        self.width = width
        self.height = height
        self.fps = rate
        self.label = label
        worker = SourceWorker(name: "ipcemu.clip")
    }

    public var name: String {
        let codec = format == .h265 ? "H.265" : "H.264"
        return "\(codec) clip \(label) \(width)x\(height)@\(formatFPS(fps)) (\(accessUnits.count) frames, looped)"
    }

    public func start(_ sink: @escaping @Sendable (FrameSourceEvent) -> Void) throws(CameraError) {
        sinkBox.withLock { $0 = sink }
        let (units, format, width, height, fps, worker, name) = (accessUnits, format, width, height, fps, worker, name)
        try worker.start {
            sink(.status(.live(description: name)))
            let startNs = Clocks.monotonicNs()
            var tick: UInt64 = 0
            func due(_ n: UInt64) -> UInt64 { UInt64((Double(n) * 1e9 / fps).rounded()) }
            while Clocks.sleep(untilMonotonicNs: startNs + due(tick), shouldStop: { worker.shouldStop }) {
                let unit = units[Int(tick % UInt64(units.count))]
                sink(.frame(Frame(format: format, width: width, height: height, bytes: unit.bytes,
                                  captureTimeMs: Clocks.unixMs(), timestampNs: due(tick), sequence: tick,
                                  isKeyFrame: unit.isKeyFrame)))
                tick += 1
            }
        }
    }

    public func stop() {
        if worker.stop() {
            sinkBox.withLock { $0 }?(.status(.stopped))
        }
    }
}
