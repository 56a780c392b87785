/// pv2.2 framing (PROTOCOL.md 2.1):
/// `"2.2"` | crc32 (BE, over everything after it) | seq (BE) | from (BE) | AES-128-ECB(PKCS#7 JSON).
///
/// No replay state here: `PayloadOpener` adds that.
public enum PV22 {
    static let prefix: [UInt8] = Array("2.2".utf8)
    /// prefix 3 + crc 4 + seq 4 + from 4.
    public static let headerSize = 15

    /// Frames `json` as one pv2.2 payload. `fromByteOrder` is how the `from` field is written:
    /// big-endian (PROTOCOL.md 2.1) unless a caller on Tuya's cloud asks for `.littleEndian`, which
    /// is what the official device SDK writes (`src/mqtt_service.c`, `pv22_packet_encode`, copies
    /// `source` = 1 in host byte order: bytes `01 00 00 00`).
    public static func seal(_ json: some Collection<UInt8>, header: SealHeader, key: LocalKey,
                            fromByteOrder: FromByteOrder = .bigEndian) throws(WireError) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(8 + json.count + PKCS7.blockSize)
        body.appendBigEndian(header.seq)
        switch fromByteOrder {
        case .bigEndian: body.appendBigEndian(header.from)
        case .littleEndian: body.appendBigEndian(header.from.byteSwapped)
        }
        let cipherStart = body.count
        body.append(contentsOf: PKCS7.pad(json))
        do {
            try WireCrypto.aes128ECB(encrypt: true, &body[cipherStart...], key: key.bytes)
        } catch {
            throw .sealingFailed("AES block encryption: \(error)")
        }
        var out = prefix
        out.reserveCapacity(headerSize - 8 + body.count)
        out.appendBigEndian(CRC32.checksum(body))
        out.append(contentsOf: body)
        return out
    }

    /// Checks the frame and decrypts it. Errors, in the order they are checked: `headerTooShort`,
    /// `wrongVersionPrefix`, `checksumMismatch`, `decryptionFailed` (ciphertext not whole blocks),
    /// `wrongKey` (the checksum matched, so the bytes are as sent, yet the plaintext has bad
    /// padding or is not a JSON object: the sender used another localKey).
    ///
    /// - Parameters:
    ///   - fromOrder: which byte orders of `from` are accepted (`FromAcceptance`); by default only
    ///     big-endian, as PROTOCOL.md 2.1 writes it.
    ///   - verifyChecksum: false skips the CRC check, as the official device SDK's
    ///     `pv22_packet_decode` does (it reads the field and never compares it). Only for Tuya's
    ///     cloud links, where a device must refuse nothing that SDK accepts.
    public static func open(_ payload: some Collection<UInt8>, key: LocalKey,
                            fromOrder: FromAcceptance = .bigEndianOnly,
                            verifyChecksum: Bool = true) throws(WireError) -> (header: SealHeader, json: [UInt8]) {
        let bytes = ArraySlice(payload)
        guard bytes.count >= prefix.count else { throw .headerTooShort(size: bytes.count, needed: headerSize) }
        guard bytes.prefix(prefix.count).elementsEqual(prefix) else {
            throw .wrongVersionPrefix(describePrefix(bytes.prefix(prefix.count)))
        }
        guard bytes.count >= headerSize else { throw .headerTooShort(size: bytes.count, needed: headerSize) }
        let expectedCRC = bytes.bigEndianUInt32(at: 3)
        if verifyChecksum {
            guard CRC32.checksum(bytes.dropFirst(7)) == expectedCRC else { throw .checksumMismatch }
        }
        let header = SealHeader(seq: bytes.bigEndianUInt32(at: 7), from: fromOrder.read(bytes.bigEndianUInt32(at: 11)))
        var plain = Array(bytes.dropFirst(headerSize))
        guard !plain.isEmpty, plain.count % PKCS7.blockSize == 0 else {
            throw .decryptionFailed("ciphertext of \(plain.count) bytes is not a positive multiple of 16")
        }
        do {
            try WireCrypto.aes128ECB(encrypt: false, &plain[...], key: key.bytes)
        } catch {
            throw .decryptionFailed("AES block decryption failed: \(error)")
        }
        guard let json = PKCS7.unpad(plain) else {
            throw .wrongKey("pv2.2 plaintext has bad PKCS#7 padding")
        }
        guard looksLikeJSONObject(json) else {
            throw .wrongKey("pv2.2 plaintext is not a JSON object")
        }
        return (header, json)
    }

    /// How the `from` field of a pv2.2 header is written.
    public enum FromByteOrder: Sendable, Equatable, Hashable {
        /// PROTOCOL.md 2.1: most significant byte first (`00 00 00 01` for the device).
        case bigEndian
        /// As Tuya's device SDK writes it on a little-endian host (`01 00 00 00` for the device).
        case littleEndian
    }

    /// Which byte orders of `from` a receiver accepts.
    public enum FromAcceptance: Sendable, Equatable, Hashable {
        /// Only big-endian (PROTOCOL.md 2.1): the field is read as written.
        case bigEndianOnly
        /// Both orders (PROTOCOL.md 9.4): a field whose bytes are `x 00 00 00` with x != 0 is the
        /// little-endian writing of the small value x (the SDK's `01 00 00 00` reads as 1); every
        /// other field is read big-endian. Ambiguous only for a big-endian `from` that is a multiple
        /// of 2^24, which no sender of PROTOCOL.md 2.1 picks on purpose.
        case eitherOrder

        func read(_ bigEndianValue: UInt32) -> UInt32 {
            switch self {
            case .bigEndianOnly:
                return bigEndianValue
            case .eitherOrder:
                if bigEndianValue & 0x00FF_FFFF == 0, bigEndianValue != 0 { return bigEndianValue >> 24 }
                return bigEndianValue
            }
        }
    }

    /// A cheap plausibility check that catches a wrong key whose garbage happens to end in valid
    /// padding: UTF-8 text whose first non-blank character is `{`. Full parsing is the envelope's job.
    static func looksLikeJSONObject(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }),
              first == UInt8(ascii: "{") else { return false }
        return String(validating: bytes, as: UTF8.self) != nil
    }
}
