/// The sender fields every protected payload carries (PROTOCOL.md 2.1): its sequence number and
/// its `from` value (1 = the device, 2 or more = an app).
public struct SealHeader: Sendable, Equatable, Hashable {
    public var seq: UInt32
    public var from: UInt32

    public init(seq: UInt32, from: UInt32) {
        self.seq = seq
        self.from = from
    }

    /// The `from` value of the device itself.
    public static let deviceFrom: UInt32 = 1
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }
}

extension ArraySlice where Element == UInt8 {
    /// The big-endian UInt32 at `offset` bytes from the start of the slice; the caller checked the length.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        let i = startIndex + offset
        return UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3])
    }
}

/// How a payload's first bytes read in a log line: ASCII if printable, else hex.
func describePrefix(_ bytes: some Collection<UInt8>) -> String {
    if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return String(decoding: bytes, as: UTF8.self)
    }
    return "0x" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
