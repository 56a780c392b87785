/// CRC-32 as zlib and IEEE 802.3 compute it (reflected polynomial 0xEDB88320, initial value and
/// final XOR 0xFFFFFFFF), table-driven. pv2.2 carries it over everything after its field
/// (PROTOCOL.md 2.1).
public enum CRC32 {
    /// The 256-entry lookup table for the reflected polynomial.
    static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
        return crc
    }

    /// The checksum of `bytes`; `CRC32.checksum("123456789".utf8) == 0xCBF43926`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        update(0, with: bytes)
    }

    /// Continues a checksum: `update(checksum(a), with: b) == checksum(a + b)`.
    public static func update(_ checksum: UInt32, with bytes: some Sequence<UInt8>) -> UInt32 {
        var crc = ~checksum
        for byte in bytes {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return ~crc
    }
}
