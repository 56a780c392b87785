import Testing
@testable import IPCWire

@Suite("CRC32 (IEEE/zlib)")
struct CRC32Tests {
    // Expected values from Python's zlib.crc32.
    @Test func knownAnswers() {
        #expect(CRC32.checksum(bytes("123456789")) == 0xCBF4_3926)
        #expect(CRC32.checksum(bytes(#"{"hello":"world"}"#)) == 0xD809_41D1)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test func incrementalEqualsWhole() {
        let a = bytes("12345"), b = bytes("6789")
        #expect(CRC32.update(CRC32.checksum(a), with: b) == CRC32.checksum(a + b))
    }
}
