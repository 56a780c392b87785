import Camera
import Foundation

/// What the app measured on a call's video (PROTOCOL.md 6): frames decoded, stamps read, frames
/// the counter says were dropped, time from `answer` to the first decoded frame, and
/// capture-to-decode latency (the device's stamp against this host's clock).
public struct VideoStats: Sendable, Equatable {
    public var framesDecoded = 0
    public var stampsRead = 0
    public var stampErrors = 0
    public var framesDropped = 0
    /// Times the counter went back (a clip that loops, a source that started again): a jump of
    /// more than half the counter's range is taken as a new start, not as thousands of drops.
    public var counterRestarts = 0
    /// Stamps read whose capture time is more than `liveStampWindowMs` away from this host's
    /// clock: the frame was stamped earlier (a recorded clip) and says nothing of this link's
    /// latency, so it is left out of `latenciesMs`.
    public var recordedStamps = 0
    public var width = 0
    public var height = 0
    /// Milliseconds from the `answer` to the first decoded frame.
    public var answerToFirstFrameMs: Double?
    /// Capture-to-decode latency of every stamped frame, milliseconds.
    public var latenciesMs: [Double] = []
    public var firstFrameAt: Date?
    /// When the first decoded frame was captured (its stamp; nil if that frame's stamp did not read).
    public var firstFrameCapturedAt: Date?
    public var lastFrameAt: Date?
    /// Each time the decoded size changed after the first frame (a `resolution` switch, PROTOCOL.md
    /// 4): the new size, when its first frame was decoded, and whether that frame's stamp read.
    public var sizeChanges: [SizeChange] = []
    /// The first 1000 stamps read: (frame counter, capture unix ms). Two links that share one
    /// source show the same pairs.
    public var stamps: [Stamp] = []
    /// The first `maxGapsKept` counter gaps: where in the stream each was (to tell a stream's
    /// start from its middle, and one link from all).
    public var gaps: [Gap] = []
    public static let maxGapsKept = 16
    /// The last counter read (to count gaps).
    var lastCounter: UInt16?

    /// Frames the counter skipped between two decoded frames.
    public struct Gap: Sendable, Equatable {
        /// The decoded frame after the gap (1 is the stream's first).
        public var frame: Int
        public var counterBefore: UInt16
        public var counterAfter: UInt16
        public var missing: Int
        /// When the frame after the gap was decoded.
        public var at: Date
    }

    public struct Stamp: Sendable, Hashable {
        public var counter: UInt16
        public var captureUnixMs: Int64
    }

    public struct SizeChange: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var at: Date
        public var stampRead: Bool
    }

    public init() {}

    /// How far a stamp's capture time may be from its arrival and still count as live (1 hour).
    public static let liveStampWindowMs: Int64 = 3_600_000

    /// Frames per second between the first and the last decoded frame.
    public var fps: Double {
        guard let a = firstFrameAt, let b = lastFrameAt, framesDecoded > 1 else { return 0 }
        let span = b.timeIntervalSince(a)
        return span > 0 ? Double(framesDecoded - 1) / span : 0
    }

    public func latencyPercentile(_ p: Double) -> Double? {
        guard !latenciesMs.isEmpty else { return nil }
        let sorted = latenciesMs.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Adds one decoded frame's luma plane.
    mutating func add(luma: [UInt8], width: Int, height: Int, stride: Int, arrivalUnixNanos: Int64, answeredAt: Date?) {
        let now = Date(timeIntervalSince1970: Double(arrivalUnixNanos) / 1e9)
        framesDecoded += 1
        let resized = framesDecoded > 1 && (width != self.width || height != self.height)
        if resized {
            // Another stream: its own source, whose counter has nothing to do with the last one.
            lastCounter = nil
        }
        self.width = width
        self.height = height
        if firstFrameAt == nil {
            firstFrameAt = now
            if let answeredAt { answerToFirstFrameMs = now.timeIntervalSince(answeredAt) * 1000 }
        }
        lastFrameAt = now
        var stampRead = false
        defer {
            if resized { sizeChanges.append(SizeChange(width: width, height: height, at: now, stampRead: stampRead)) }
        }
        do {
            let stamp = try LatencyStamp.read(luma: luma, width: width, height: height, stride: stride)
            stampRead = true
            stampsRead += 1
            let arrivalMs = arrivalUnixNanos / 1_000_000
            let captured = stamp.unixMs(near: arrivalMs)
            if stamps.count < 1000 { stamps.append(Stamp(counter: stamp.counter, captureUnixMs: captured)) }
            if framesDecoded == 1 { firstFrameCapturedAt = Date(timeIntervalSince1970: Double(captured) / 1000) }
            let (age, overflow) = arrivalMs.subtractingReportingOverflow(captured)
            if !overflow, age.magnitude <= UInt64(Self.liveStampWindowMs) {
                latenciesMs.append(Double(age) + Double(arrivalUnixNanos % 1_000_000) / 1e6)
            } else {
                recordedStamps += 1
            }
            if let last = lastCounter {
                let missing = LatencyStamp.framesMissing(between: last, and: stamp.counter)
                if missing > LatencyStamp.counterModulus / 2 {
                    counterRestarts += 1
                } else {
                    framesDropped += missing
                    if missing > 0, gaps.count < Self.maxGapsKept {
                        gaps.append(Gap(frame: framesDecoded, counterBefore: last, counterAfter: stamp.counter, missing: missing, at: now))
                    }
                }
            }
            lastCounter = stamp.counter
        } catch {
            stampErrors += 1
        }
    }

    public var summary: String {
        var parts = [
            "\(framesDecoded) frames \(width)x\(height)",
            String(format: "%.1f fps", fps),
            "\(stampsRead) stamps read",
            "\(framesDropped) dropped",
        ]
        if let ms = answerToFirstFrameMs { parts.append(String(format: "answer -> first frame %.0f ms", ms)) }
        if counterRestarts > 0 { parts.append("counter started again \(counterRestarts)x") }
        if let p50 = latencyPercentile(50), let p95 = latencyPercentile(95) {
            parts.append(String(format: "latency p50 %.1f ms p95 %.1f ms", p50, p95))
        }
        if recordedStamps > 0 { parts.append("\(recordedStamps) stamps from a recording (no latency)") }
        return parts.joined(separator: ", ")
    }
}
