import Crypto
import _CryptoExtras

/// pv2.2 framing (PROTOCOL.md 2.1):
/// `"2.2"` | crc32 (BE, over everything after it) | seq (BE) | from (BE) | AES-128-ECB(PKCS#7 JSON).
///
/// No replay state here: `PayloadOpener` adds that.
public enum PV22 {
    static let prefix: [UInt8] = Array("2.2".utf8)
    /// prefix 3 + crc 4 + seq 4 + from 4.
    public static let headerSize = 15

    /// Frames `json` as one pv2.2 payload.
    public static func seal(_ json: some Collection<UInt8>, header: SealHeader, key: LocalKey) throws(WireError) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(8 + json.count + PKCS7.blockSize)
        body.appendBigEndian(header.seq)
        body.appendBigEndian(header.from)
        let cipherStart = body.count
        body.append(contentsOf: PKCS7.pad(json))
        let symmetricKey = key.symmetricKey
        var offset = cipherStart
        while offset < body.count {
            do {
                try AES.permute(&body[offset..<offset + PKCS7.blockSize], key: symmetricKey)
            } catch {
                throw .sealingFailed("AES block encryption: \(error)")
            }
            offset += PKCS7.blockSize
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
    public static func open(_ payload: some Collection<UInt8>, key: LocalKey) throws(WireError) -> (header: SealHeader, json: [UInt8]) {
        let bytes = ArraySlice(payload)
        guard bytes.count >= prefix.count else { throw .headerTooShort(size: bytes.count, needed: headerSize) }
        guard bytes.prefix(prefix.count).elementsEqual(prefix) else {
            throw .wrongVersionPrefix(describePrefix(bytes.prefix(prefix.count)))
        }
        guard bytes.count >= headerSize else { throw .headerTooShort(size: bytes.count, needed: headerSize) }
        let expectedCRC = bytes.bigEndianUInt32(at: 3)
        guard CRC32.checksum(bytes.dropFirst(7)) == expectedCRC else { throw .checksumMismatch }
        let header = SealHeader(seq: bytes.bigEndianUInt32(at: 7), from: bytes.bigEndianUInt32(at: 11))
        var plain = Array(bytes.dropFirst(headerSize))
        guard !plain.isEmpty, plain.count % PKCS7.blockSize == 0 else {
            throw .decryptionFailed("ciphertext of \(plain.count) bytes is not a positive multiple of 16")
        }
        let symmetricKey = key.symmetricKey
        var offset = 0
        while offset < plain.count {
            do {
                try AES.inversePermute(&plain[offset..<offset + PKCS7.blockSize], key: symmetricKey)
            } catch {
                throw .decryptionFailed("AES block decryption failed: \(error)")
            }
            offset += PKCS7.blockSize
        }
        guard let json = PKCS7.unpad(plain) else {
            throw .wrongKey("pv2.2 plaintext has bad PKCS#7 padding")
        }
        guard looksLikeJSONObject(json) else {
            throw .wrongKey("pv2.2 plaintext is not a JSON object")
        }
        return (header, json)
    }

    /// A cheap plausibility check that catches a wrong key whose garbage happens to end in valid
    /// padding: UTF-8 text whose first non-blank character is `{`. Full parsing is the envelope's job.
    static func looksLikeJSONObject(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }),
              first == UInt8(ascii: "{") else { return false }
        return String(validating: bytes, as: UTF8.self) != nil
    }
}
