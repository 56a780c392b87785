/// pv2.3 framing (PROTOCOL.md 2.1):
/// `"2.3"` | seq (BE) | from (BE) | reserved 0 | nonce (12) | AES-128-GCM ciphertext | tag (16).
/// The first 12 bytes are the additional authenticated data.
///
/// No replay state here: `PayloadOpener` adds that.
public enum PV23 {
    static let prefix: [UInt8] = Array("2.3".utf8)
    /// prefix 3 + seq 4 + from 4 + reserved 1: the AAD.
    public static let headerSize = 12
    public static let nonceSize = 12
    public static let tagSize = 16
    /// The shortest well-formed payload: header, nonce and tag around an empty ciphertext.
    public static let minimumSize = headerSize + nonceSize + tagSize

    /// Frames `json` as one pv2.3 payload with a fresh random nonce.
    public static func seal(_ json: some Collection<UInt8>, header: SealHeader, key: LocalKey) throws(WireError) -> [UInt8] {
        guard let nonce = WireCrypto.randomBytes(nonceSize) else {
            throw .sealingFailed("AES-GCM: the system's random source gave no nonce")
        }
        return try seal(json, header: header, key: key, nonce: nonce)
    }

    /// Frames `json` with the given 12-byte nonce. Only for test vectors: a nonce used twice
    /// with one key gives the key stream away.
    public static func seal(_ json: some Collection<UInt8>, header: SealHeader, key: LocalKey, nonce: [UInt8]) throws(WireError) -> [UInt8] {
        var aad = prefix
        aad.appendBigEndian(header.seq)
        aad.appendBigEndian(header.from)
        aad.append(0)
        guard nonce.count == nonceSize else {
            throw .invalidValue(field: "nonce", value: "\(nonce.count) bytes", expected: "\(nonceSize) bytes")
        }
        let box: (ciphertext: [UInt8], tag: [UInt8])
        do {
            box = try WireCrypto.gcmSeal(Array(json), key: key.bytes, nonce: nonce, aad: aad)
        } catch {
            throw .sealingFailed("AES-GCM: \(error)")
        }
        var out = aad
        out.reserveCapacity(minimumSize + json.count)
        out.append(contentsOf: nonce)
        out.append(contentsOf: box.ciphertext)
        out.append(contentsOf: box.tag)
        return out
    }

    /// Checks the frame and decrypts it. Errors, in the order they are checked: `headerTooShort`,
    /// `wrongVersionPrefix`, `authenticationFailed` (tampered, truncated, or sealed with another key).
    public static func open(_ payload: some Collection<UInt8>, key: LocalKey) throws(WireError) -> (header: SealHeader, json: [UInt8]) {
        let bytes = ArraySlice(payload)
        guard bytes.count >= prefix.count else { throw .headerTooShort(size: bytes.count, needed: minimumSize) }
        guard bytes.prefix(prefix.count).elementsEqual(prefix) else {
            throw .wrongVersionPrefix(describePrefix(bytes.prefix(prefix.count)))
        }
        guard bytes.count >= minimumSize else { throw .headerTooShort(size: bytes.count, needed: minimumSize) }
        let header = SealHeader(seq: bytes.bigEndianUInt32(at: 3), from: bytes.bigEndianUInt32(at: 7))
        let aad = bytes.prefix(headerSize)
        let nonce = bytes.dropFirst(headerSize).prefix(nonceSize)
        let ciphertext = bytes.dropFirst(headerSize + nonceSize).dropLast(tagSize)
        let tag = bytes.suffix(tagSize)
        guard let json = WireCrypto.gcmOpen(Array(ciphertext), tag: Array(tag), key: key.bytes, nonce: Array(nonce), aad: Array(aad)) else {
            throw .authenticationFailed
        }
        return (header, json)
    }
}
