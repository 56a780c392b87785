import Synchronization

/// A V4L2 camera (USB webcam, Pi camera, vivid) through libv4l2: opened by path or by card name,
/// the best format negotiated (V4L2Negotiation), mmap streaming, real capture timestamps.
///
/// When the camera is missing, busy, or unplugged mid-stream, the source reports
/// `.noVideo(reason)` and retries with exponential backoff until it is stopped; when the camera
/// comes back it reports `.live` again and frames resume (the sequence number and presentation
/// time carry on).
public final class V4L2Source: FrameSource {
    public enum Device: Sendable, Equatable, CustomStringConvertible {
        /// A device node, /dev/video0.
        case path(String)
        /// The card name VIDIOC_QUERYCAP reports ("HD Pro Webcam C920"); matched exactly, then as a
        /// case-insensitive substring, among the capture nodes the driver lists.
        case name(String)

        public var description: String {
            switch self {
            case .path(let path): return path
            case .name(let name): return "\"\(name)\""
            }
        }
    }

    /// How the source waits between attempts.
    public struct Retry: Sendable, Equatable {
        public var initialDelayMs: Int
        public var maximumDelayMs: Int
        /// No frame for this long while streaming counts as a lost camera.
        public var stallTimeoutMs: Int

        public init(initialDelayMs: Int = 250, maximumDelayMs: Int = 5000, stallTimeoutMs: Int = 5000) {
            self.initialDelayMs = initialDelayMs
            self.maximumDelayMs = maximumDelayMs
            self.stallTimeoutMs = stallTimeoutMs
        }
    }

    public let device: Device
    public let request: V4L2Negotiation.Request
    public let bufferCount: Int
    public let retry: Retry
    private let driver: V4L2Driver
    private let worker: SourceWorker
    private let sinkBox = Mutex<(@Sendable (FrameSourceEvent) -> Void)?>(nil)
    private let skips = Mutex<(count: Int, last: String?)>((0, nil))

    public init(
        device: Device, request: V4L2Negotiation.Request, bufferCount: Int = 4, retry: Retry = Retry(),
        driver: V4L2Driver = .system
    ) {
        self.device = device
        self.request = request
        self.bufferCount = max(2, bufferCount)
        self.retry = retry
        self.driver = driver
        worker = SourceWorker(name: "ipcemu.v4l2")
    }

    public var name: String { "v4l2 \(device)" }

    /// Buffers of a compressed stream that could not be read (an H.265 buffer without NAL units or
    /// with a bad NAL header): dropped, counted, and the last reason kept. Frames go on.
    public var skippedBuffers: (count: Int, lastReason: String?) { skips.withLock { ($0.count, $0.last) } }

    public func start(_ sink: @escaping @Sendable (FrameSourceEvent) -> Void) throws(CameraError) {
        sinkBox.withLock { $0 = sink }
        let (driver, device, request, bufferCount, retry, worker) =
            (driver, device, request, bufferCount, retry, worker)
        try worker.start {
            var loop = CaptureLoop(driver: driver, device: device, request: request, bufferCount: bufferCount,
                                   retry: retry, shouldStop: { worker.shouldStop }, sink: sink,
                                   skipped: { why in self.skips.withLock { $0 = ($0.count + 1, why) } })
            loop.run()
        }
    }

    public func stop() {
        if worker.stop() {
            sinkBox.withLock { $0 }?(.status(.stopped))
        }
    }

    /// Finds and opens the camera (a capture node that can stream).
    static func open(_ device: Device, driver: V4L2Driver) throws(V4L2Error) -> V4L2Device {
        switch device {
        case .path(let path):
            let dev = try V4L2Device.open(path, driver: driver)
            let caps = try dev.capabilities()
            guard caps.canCapture, caps.canStream else { throw .notACaptureDevice(path) }
            return dev
        case .name(let name):
            var candidates: [(V4L2Device, String)] = []
            var busy: String?
            for path in driver.listDevicePaths() {
                do throws(V4L2Error) {
                    let dev = try V4L2Device.open(path, driver: driver)
                    let caps = try dev.capabilities()
                    if caps.canCapture, caps.canStream { candidates.append((dev, caps.card)) } else { dev.close() }
                } catch {
                    if case .busy = error { busy = path }
                }
            }
            let match = candidates.first { $0.1 == name }
                ?? candidates.first { $0.1.lowercased().contains(name.lowercased()) }
            for (dev, _) in candidates where dev !== match?.0 { dev.close() }
            if let match { return match.0 }
            if let busy { throw .busy("\(busy) (camera \"\(name)\"?)") }
            throw .notFound("camera named \"\(name)\"")
        }
    }
}

/// The source's thread: connect, stream until something breaks, report, back off, repeat.
private struct CaptureLoop {
    let driver: V4L2Driver
    let device: V4L2Source.Device
    let request: V4L2Negotiation.Request
    let bufferCount: Int
    let retry: V4L2Source.Retry
    let shouldStop: () -> Bool
    let sink: @Sendable (FrameSourceEvent) -> Void
    let skipped: (String) -> Void

    private var sequence: UInt64 = 0
    private var lastStatus: FrameSourceStatus?
    private let startNs = Clocks.monotonicNs()
    private var lastTimestampNs: UInt64?

    init(driver: V4L2Driver, device: V4L2Source.Device, request: V4L2Negotiation.Request, bufferCount: Int,
         retry: V4L2Source.Retry, shouldStop: @escaping () -> Bool,
         sink: @escaping @Sendable (FrameSourceEvent) -> Void, skipped: @escaping (String) -> Void) {
        self.driver = driver
        self.device = device
        self.request = request
        self.bufferCount = bufferCount
        self.retry = retry
        self.shouldStop = shouldStop
        self.sink = sink
        self.skipped = skipped
    }

    mutating func run() {
        var delayMs = retry.initialDelayMs
        while !shouldStop() {
            var deliveredFrames = false
            do throws(V4L2Error) {
                try session(delivered: &deliveredFrames)
            } catch {
                report(.noVideo(reason: error.description))
            }
            if shouldStop() { break }
            if deliveredFrames { delayMs = retry.initialDelayMs }
            let wake = Clocks.monotonicNs() + UInt64(delayMs) * 1_000_000
            guard Clocks.sleep(untilMonotonicNs: wake, shouldStop: shouldStop) else { break }
            delayMs = min(retry.maximumDelayMs, delayMs * 2)
        }
    }

    private mutating func report(_ status: FrameSourceStatus) {
        guard status != lastStatus else { return }
        lastStatus = status
        sink(.status(status))
    }

    /// One connection: returns when stopped, throws when the camera fails.
    private mutating func session(delivered: inout Bool) throws(V4L2Error) {
        let dev = try V4L2Source.open(device, driver: driver)
        defer { dev.close() }
        let offered = dev.formats()
        guard let choice = V4L2Negotiation.choose(from: offered, request: request) else {
            throw .noUsableFormat(dev.path, offered: offered.map(\.fourccString))
        }
        let stream = try V4L2Stream(device: dev, choice: choice, bufferCount: bufferCount)
        defer { stream.close() }
        report(.live(description: "\(dev.path) \(stream.summary)"))
        var lastDriverSequence: UInt32?
        var parameterSets = H264ParameterSetCache()
        var h265 = H265BufferAssembler()
        var lastFrameNs = Clocks.monotonicNs()
        while !shouldStop() {
            guard let captured = try stream.next(timeoutMs: 100) else {
                let waited = Clocks.monotonicNs() - lastFrameNs
                if waited > UInt64(retry.stallTimeoutMs) * 1_000_000 {
                    throw .stalled(dev.path, seconds: retry.stallTimeoutMs / 1000)
                }
                continue
            }
            let nowMono = Clocks.monotonicNs()
            let nowUnix = Clocks.unixMs()
            lastFrameNs = nowMono
            // Frames the driver dropped (a gap in its sequence) still count.
            if let last = lastDriverSequence, captured.driverSequence > last &+ 1, captured.driverSequence &- last < 1000 {
                sequence += UInt64(captured.driverSequence &- last &- 1)
            }
            lastDriverSequence = captured.driverSequence
            let captureMono = min(captured.monotonicNs ?? nowMono, nowMono)
            let captureUnix = nowUnix - Int64((nowMono - captureMono) / 1_000_000)
            let bufferTs = captureMono >= startNs ? captureMono - startNs : 0
            let pictures: [(bytes: [UInt8], isKeyFrame: Bool)]
            switch stream.format {
            case .h264:
                // Pass-through: SPS/PPS in front of every IDR, even when the camera sends them once.
                pictures = [parameterSets.process(captured.bytes)]
            case .h265:
                // Pass-through to the fmp4Stream channel: access units, VPS/SPS/PPS before key frames.
                do throws(H265BufferAssembler.Failure) {
                    pictures = try h265.accessUnits(in: captured.bytes).map { ($0.bytes, $0.isKeyFrame) }
                } catch {
                    skipped("\(dev.path): \(error)")
                    sequence += 1  // a frame lost: the gap shows in the sequence
                    continue
                }
            default:
                pictures = [(captured.bytes, captured.isKeyFrame)]
            }
            for picture in pictures {
                var ts = bufferTs
                if let last = lastTimestampNs, ts <= last { ts = last + 1 }
                lastTimestampNs = ts
                let frame = Frame(format: stream.format, width: stream.width, height: stream.height,
                                  bytes: picture.bytes, captureTimeMs: captureUnix, timestampNs: ts,
                                  sequence: sequence, isKeyFrame: picture.isKeyFrame)
                sequence += 1
                delivered = true
                sink(.frame(frame))
            }
        }
    }
}
