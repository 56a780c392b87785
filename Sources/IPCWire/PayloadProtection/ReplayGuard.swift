/// The receiver's replay state (PROTOCOL.md 2.1): the last accepted seq per `from` value. A
/// message is fresh when its seq is greater than the last one accepted from the same `from`;
/// each sender has its own counter, so apps never share one.
///
/// Bounded (issue 10, hostile peers): at most `capacity` senders are remembered; a new sender
/// beyond that evicts the one heard from least recently. A sender that is not remembered (never
/// heard from, evicted, or from before a restart) is checked by its envelope time instead
/// (`PayloadOpener.freshnessWindowSeconds`), so neither a flood of `from` values nor a restart opens
/// the door to old messages.
///
/// `check` and `accept` are separate so a message that fails later checks leaves no trace.
public struct ReplayGuard: Sendable, Equatable {
    /// How many senders are remembered by default: far more than the apps of one household.
    public static let defaultCapacity = 1024

    private struct Entry: Sendable, Equatable {
        var seq: UInt32
        /// When it was last accepted, in acceptance order (for the eviction).
        var stamp: UInt64
    }

    public let capacity: Int
    private var entries: [UInt32: Entry] = [:]
    private var acceptances: UInt64 = 0

    public init(capacity: Int = defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// The last seq accepted from `from`, or nil if none is remembered.
    public func lastAccepted(from: UInt32) -> UInt32? { entries[from]?.seq }

    /// Whether a seq from `from` is remembered.
    public func knows(_ from: UInt32) -> Bool { entries[from] != nil }

    /// How many senders are remembered (never more than `capacity`).
    public var count: Int { entries.count }

    /// Throws `replayed` unless `header.seq` is greater than the last accepted for `header.from`.
    public func check(_ header: SealHeader) throws(WireError) {
        if let last = entries[header.from]?.seq, header.seq <= last {
            throw .replayed(from: header.from, seq: header.seq, lastAccepted: last)
        }
    }

    /// Records `header` as accepted. Call only after every other check passed.
    public mutating func accept(_ header: SealHeader) {
        acceptances &+= 1
        if entries[header.from] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.stamp < $1.value.stamp })?.key {
            entries.removeValue(forKey: oldest)
        }
        entries[header.from] = Entry(seq: header.seq, stamp: acceptances)
    }
}
