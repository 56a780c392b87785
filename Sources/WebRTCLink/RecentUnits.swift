// What a fan-out keeps for subscribers that start at once (issue 24 item 6; `VideoFanOut`).
import Dispatch

/// The last key frame of a stream and the deltas after it, for a subscriber that starts at once
/// (issue 24 item 6). Bounded: a chain longer than `maxUnits` or `maxBytes`, or whose key frame
/// is older than `maxAge`, is dropped until the next key frame.
public struct RecentUnits: Sendable {
    public struct Limit: Sendable, Hashable {
        /// The oldest key frame a subscriber is started from (its picture is this stale at most).
        public var maxAge: Duration
        public var maxUnits: Int
        public var maxBytes: Int

        public init(maxAge: Duration, maxUnits: Int, maxBytes: Int) {
            self.maxAge = maxAge
            self.maxUnits = max(0, maxUnits)
            self.maxBytes = max(0, maxBytes)
        }

        /// A quarter of a second: at most 8 frames of 30 fps handed at once.
        public static let standard = Limit(maxAge: .milliseconds(250), maxUnits: 16, maxBytes: 4 << 20)
        /// Nothing kept: every subscriber waits for the next key frame.
        public static let none = Limit(maxAge: .zero, maxUnits: 0, maxBytes: 0)

        var keeps: Bool { maxUnits > 0 && maxBytes > 0 && maxAge > .zero }
    }

    /// One access unit, copied, with the time it came (`DispatchTime` uptime) and its RTP packets
    /// (when the fan-out makes them).
    public struct Unit: Sendable {
        public let bytes: [UInt8]
        public let isKeyFrame: Bool
        public let atNanos: UInt64
        public let packets: RTPPackets?

        public init(bytes: [UInt8], isKeyFrame: Bool, atNanos: UInt64, packets: RTPPackets? = nil) {
            self.bytes = bytes
            self.isKeyFrame = isKeyFrame
            self.atNanos = atNanos
            self.packets = packets
        }
    }

    public let limit: Limit
    private(set) var units: [Unit] = []
    private(set) var bytes = 0

    public init(limit: Limit) { self.limit = limit }

    mutating func add(_ unit: Unit) {
        if unit.isKeyFrame {
            units.removeAll(keepingCapacity: true)
            bytes = 0
        } else if units.isEmpty {
            return
        }
        let keyFrameAt = units.first?.atNanos ?? unit.atNanos
        guard units.count < limit.maxUnits, bytes + unit.bytes.count <= limit.maxBytes,
              unit.atNanos &- keyFrameAt <= limit.maxAge.nanoseconds
        else {
            units.removeAll()
            bytes = 0
            return
        }
        units.append(unit)
        bytes += unit.bytes.count
    }

    /// The units to start a subscriber from at `now`: empty when there is no key frame or it is
    /// older than `maxAge`.
    func servable(at now: UInt64) -> [Unit] {
        guard let first = units.first, first.isKeyFrame, now &- first.atNanos <= limit.maxAge.nanoseconds else { return [] }
        return units
    }
}
