/// The receiver's replay state (PROTOCOL.md 2.1): the last accepted seq per `from` value. A
/// message is fresh when its seq is greater than the last one accepted from the same `from`;
/// each sender has its own counter, so apps never share one.
///
/// `check` and `accept` are separate so a message that fails later checks leaves no trace.
public struct ReplayGuard: Sendable, Equatable {
    private var lastAccepted: [UInt32: UInt32] = [:]

    public init() {}

    /// The last seq accepted from `from`, or nil if none yet.
    public func lastAccepted(from: UInt32) -> UInt32? { lastAccepted[from] }

    /// Throws `replayed` unless `header.seq` is greater than the last accepted for `header.from`.
    public func check(_ header: SealHeader) throws(WireError) {
        if let last = lastAccepted[header.from], header.seq <= last {
            throw .replayed(from: header.from, seq: header.seq, lastAccepted: last)
        }
    }

    /// Records `header` as accepted. Call only after every other check passed.
    public mutating func accept(_ header: SealHeader) {
        lastAccepted[header.from] = header.seq
    }
}
