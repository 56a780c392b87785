import Synchronization

/// The synthetic camera: the stamped test pattern (TestPatternGenerator) at any size and frame
/// rate, paced in real time. Frame n is due at start + n/fps on the monotonic clock (absolute
/// deadlines, so the rate never drifts); when the consumer or the machine falls more than a frame
/// behind, the missed ticks are skipped rather than burst out, and never counted (the counter
/// counts frames captured).
public final class TestPatternSource: FrameSource {
    public let width: Int
    public let height: Int
    public let fps: Double
    private let worker: SourceWorker
    private let sinkBox = Mutex<(@Sendable (FrameSourceEvent) -> Void)?>(nil)

    public init(width: Int, height: Int, fps: Double) throws(CameraError) {
        guard fps > 0, fps <= 1000, fps.isFinite else { throw .invalidConfig("test pattern fps \(fps): needs 0 < fps <= 1000") }
        _ = try TestPatternGenerator(width: width, height: height)
        self.width = width
        self.height = height
        self.fps = fps
        worker = SourceWorker(name: "ipcemu.pattern")
    }

    public var name: String { "test pattern \(width)x\(height)@\(formatFPS(fps))" }

    public func start(_ sink: @escaping @Sendable (FrameSourceEvent) -> Void) throws(CameraError) {
        let first = try TestPatternGenerator(width: width, height: height)
        sinkBox.withLock { $0 = sink }
        let (fps, worker, name) = (fps, worker, name)
        try worker.start {
            var generator = first
            sink(.status(.live(description: name)))
            let startNs = Clocks.monotonicNs()
            var tick: UInt64 = 0
            func due(_ n: UInt64) -> UInt64 { UInt64((Double(n) * 1e9 / fps).rounded()) }
            while true {
                guard Clocks.sleep(untilMonotonicNs: startNs + due(tick), shouldStop: { worker.shouldStop }) else { break }
                let frame = generator.nextFrame(unixMs: Clocks.unixMs(), timestampNs: due(tick))
                sink(.frame(frame))
                tick += 1
                let now = Clocks.monotonicNs()
                if now > startNs + due(tick + 1) {
                    // More than a frame late: resume at the next tick still ahead of us.
                    let behind = UInt64(Double(now - startNs) * fps / 1e9)
                    tick = max(tick, behind + 1)
                }
            }
        }
    }

    public func stop() {
        if worker.stop() {
            sinkBox.withLock { $0 }?(.status(.stopped))
        }
    }
}

func formatFPS(_ fps: Double) -> String {
    fps == fps.rounded() ? String(Int(fps)) : String(fps)
}
