/// A pre-encoded H.264 clip played in a loop, in real time, as H.264 access units: no encoder at
/// all, so one clip can feed any number of calls (DESIGN.md "Scale"). Access unit n goes out at
/// start + n/fps (absolute deadlines); timestamps and sequence numbers keep counting across the
/// loop boundary, and since the clip starts at an IDR (with SPS/PPS), the stream stays decodable.
public final class ClipLoopSource: FrameSource {
    public let clip: H264Clip
    public let fps: Double
    private let label: String
    private let worker: SourceWorker
    private let sinkBox = Locked<(@Sendable (FrameSourceEvent) -> Void)?>(nil)

    /// `fps` nil uses the clip's own rate (SPS timing), else 30.
    public init(clip: H264Clip, fps: Double? = nil, label: String = "clip") throws(CameraError) {
        let rate = fps ?? clip.fps ?? 30
        guard rate > 0, rate <= 1000, rate.isFinite else { throw .invalidConfig("clip fps \(rate)") }
        self.clip = clip
        self.fps = rate
        self.label = label
        worker = SourceWorker(name: "ipcemu.clip")
    }

    public var name: String {
        "H.264 clip \(label) \(clip.width)x\(clip.height)@\(formatFPS(fps)) (\(clip.accessUnits.count) frames, looped)"
    }

    public func start(_ sink: @escaping @Sendable (FrameSourceEvent) -> Void) throws(CameraError) {
        sinkBox.withLock { $0 = sink }
        let (clip, fps, worker, name) = (clip, fps, worker, name)
        try worker.start {
            sink(.status(.live(description: name)))
            let startNs = Clocks.monotonicNs()
            let units = clip.accessUnits
            var tick: UInt64 = 0
            func due(_ n: UInt64) -> UInt64 { UInt64((Double(n) * 1e9 / fps).rounded()) }
            while Clocks.sleep(untilMonotonicNs: startNs + due(tick), shouldStop: { worker.shouldStop }) {
                let unit = units[Int(tick % UInt64(units.count))]
                sink(.frame(Frame(format: .h264, width: clip.width, height: clip.height, bytes: unit.bytes,
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
