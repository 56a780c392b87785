// The device's side of PROTOCOL.md 7, step 4, as a sans-IO value: H.265 access units (Annex B,
// as the shared encoder gives them) in, the binary data channel messages out. The stream starts
// at a key frame with the initialisation segment (number 1, kind 0); each access unit is one
// media segment (`moof`+`mdat`), numbered on from 2 modulo 256. When the parameter sets change
// (a `resolution` switch to another size), the next key frame is preceded by a new
// initialisation segment, numbered 1 again; the media numbers go on from 2.
import IPCWire

public struct FMP4StreamMuxer: Sendable {
    /// Counters; they only grow.
    public struct Statistics: Sendable, Hashable {
        public var accessUnits = 0
        public var initializationSegments = 0
        public var mediaSegments = 0
        public var keyFrames = 0
        public var messages = 0
        public var bytes = 0
        /// Delta frames skipped while waiting for a key frame (the start, a size change).
        public var skippedWaitingForKeyFrame = 0
        /// Access units refused (no picture data, a bad SPS, too large): the text of the last one.
        public var refused = 0
        public var lastRefusal: String?
        public init() {}
    }

    /// Frame duration in the 90 kHz timescale (from the stream's nominal rate).
    public let frameDuration: UInt32
    public private(set) var stats = Statistics()
    /// The parameter sets of the last initialisation segment sent.
    public private(set) var current: HEVCParameterSets?
    private var latestVPS: [UInt8]?
    private var latestSPS: [UInt8]?
    private var latestPPS: [UInt8]?
    private var segmentNumber: UInt8 = 1
    private var waitingForKeyFrame = true
    private var sequenceNumber: UInt32 = 0
    private var firstTimeNanos: UInt64?
    private var lastDecodeTime: UInt64?

    public init(fps: Int) {
        frameDuration = UInt32(FMP4Writer.timescale) / UInt32(max(1, min(fps, 240)))
    }

    /// The messages to send for one access unit (empty while waiting for a key frame).
    /// - Parameter timeNanos: when it was captured or encoded, on any monotonic clock.
    public mutating func messages(forAccessUnit accessUnit: [UInt8], timeNanos: UInt64) -> [[UInt8]] {
        stats.accessUnits += 1
        let sample: HEVCSample
        do {
            sample = try HEVCSample(annexB: accessUnit)
        } catch {
            return refuse("\(error)")
        }
        if let vps = sample.vps { latestVPS = vps }
        if let sps = sample.sps { latestSPS = sps }
        if let pps = sample.pps { latestPPS = pps }
        var out: [[UInt8]] = []
        if sample.isKeyFrame, let vps = latestVPS, let sps = latestSPS, let pps = latestPPS,
            current == nil || current?.vps != vps || current?.sps != sps || current?.pps != pps
        {
            let sets: HEVCParameterSets
            do {
                sets = try HEVCParameterSets(vps: vps, sps: sps, pps: pps)
            } catch {
                return refuse("\(error)")
            }
            let initSegment = FMP4Writer.initializationSegment(sets)
            guard let initMessages = try? FMP4Framing.messages(for: initSegment, kind: .initialization, segmentNumber: 1) else {
                return refuse("an initialisation segment of \(initSegment.count) bytes does not fit one fragment")
            }
            current = sets
            segmentNumber = 1
            waitingForKeyFrame = false
            stats.initializationSegments += 1
            out.append(contentsOf: initMessages)
        }
        guard current != nil, !waitingForKeyFrame else {
            stats.skippedWaitingForKeyFrame += 1
            return []
        }
        if firstTimeNanos == nil { firstTimeNanos = timeNanos }
        let elapsed = timeNanos >= (firstTimeNanos ?? 0) ? timeNanos - (firstTimeNanos ?? 0) : 0
        var decodeTime = elapsed / 1_000_000_000 * UInt64(FMP4Writer.timescale)
            + (elapsed % 1_000_000_000) * UInt64(FMP4Writer.timescale) / 1_000_000_000
        if let last = lastDecodeTime, decodeTime <= last { decodeTime = last + 1 }
        lastDecodeTime = decodeTime
        sequenceNumber &+= 1
        let number = segmentNumber &+ 1
        let segment = FMP4Writer.mediaSegment(
            sample: sample.data, isKeyFrame: sample.isKeyFrame, sequenceNumber: sequenceNumber, decodeTime: decodeTime,
            duration: frameDuration)
        let media: [[UInt8]]
        do {
            media = try FMP4Framing.messages(for: segment, kind: .media, segmentNumber: number)
        } catch {
            stats.messages += out.count
            return out + refuse("\(error)")
        }
        segmentNumber = number
        stats.mediaSegments += 1
        if sample.isKeyFrame { stats.keyFrames += 1 }
        out.append(contentsOf: media)
        stats.messages += out.count
        stats.bytes += out.reduce(0) { $0 + $1.count }
        return out
    }

    /// Forget the stream: the next key frame starts again with an initialisation segment (after
    /// frames were dropped because the channel could not keep up).
    public mutating func restartAtKeyFrame() {
        current = nil
        segmentNumber = 1
        waitingForKeyFrame = true
    }

    private mutating func refuse(_ why: String) -> [[UInt8]] {
        stats.refused += 1
        stats.lastRefusal = why
        return []
    }
}
