import IPCWire

/// The SDK's primitives: MD5 (`utils/uni_md5.c`), AES-128-ECB with PKCS#7 (`utils/aes_inf.c`,
/// `aes128_ecb_encode` / `aes128_ecb_decode`), and the hex it prints with `%02x` / `%02X`.
enum TuyaCrypto {
    static let blockSize = 16

    /// The MD5 digest of `bytes` (libcrypto failing leaves 16 zero bytes: a signature no server accepts).
    static func md5(_ bytes: some Collection<UInt8>) -> [UInt8] {
        WireCrypto.md5(Array(bytes)) ?? [UInt8](repeating: 0, count: 16)
    }

    /// Lower-case hex, as `sprintf("%02x")` per byte.
    static func lowerHex(_ bytes: some Sequence<UInt8>) -> String {
        hex(bytes, digits: Array("0123456789abcdef".utf8))
    }

    /// Upper-case hex, as `sprintf("%02X")` per byte.
    static func upperHex(_ bytes: some Sequence<UInt8>) -> String {
        hex(bytes, digits: Array("0123456789ABCDEF".utf8))
    }

    private static func hex(_ bytes: some Sequence<UInt8>, digits: [UInt8]) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first 16 bytes of a key string: what the SDK hands AES (`aes128_ecb_*` read 16 bytes of
    /// the authkey, secKey or localKey). Throws if the key has fewer than 16 bytes.
    static func aesKey(_ key: String, field: String) throws(TuyaCloudError) -> [UInt8] {
        let bytes = Array(key.utf8)
        guard bytes.count >= 16 else {
            throw .invalidInput(field: field, why: "needs at least 16 bytes for AES-128, has \(bytes.count)")
        }
        return Array(bytes.prefix(16))
    }

    /// PKCS#7-pads `plain` (1 to 16 bytes, `__Add_Pkcs`) and encrypts it block by block.
    static func encryptECB(_ plain: some Collection<UInt8>, key: [UInt8]) throws(TuyaCloudError) -> [UInt8] {
        let pad = blockSize - plain.count % blockSize
        var buffer = Array(plain)
        buffer.append(contentsOf: repeatElement(UInt8(pad), count: pad))
        do {
            try WireCrypto.aes128ECB(encrypt: true, &buffer[...], key: key)
        } catch {
            throw .invalidInput(field: "key", why: "AES refused it: \(error)")
        }
        return buffer
    }

    /// Decrypts whole blocks and removes the padding the way the SDK does
    /// (`atop_response_result_decrpyt`: the last byte says how many to drop, nothing else is
    /// checked), except that a last byte outside 1...16 is refused instead of read past.
    static func decryptECB(_ cipher: some Collection<UInt8>, key: [UInt8]) throws(TuyaCloudError) -> [UInt8] {
        var buffer = Array(cipher)
        guard !buffer.isEmpty, buffer.count % blockSize == 0 else {
            throw .decryptionFailed("\(buffer.count) bytes is not a positive multiple of 16")
        }
        do {
            try WireCrypto.aes128ECB(encrypt: false, &buffer[...], key: key)
        } catch {
            throw .decryptionFailed("AES refused the block: \(error)")
        }
        guard let last = buffer.last, last >= 1, Int(last) <= blockSize else {
            throw .wrongKey("the last block does not end in PKCS#7 padding")
        }
        return Array(buffer.dropLast(Int(last)))
    }

    /// Standard base64 (RFC 4648 with padding), as `mbedtls_base64_decode` reads it; nil if not.
    static func base64Decode(_ text: String) -> [UInt8]? {
        var stripped = Array(text.utf8)
        stripped.removeAll { $0 == 0x0A || $0 == 0x0D }
        guard stripped.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(stripped.count / 4 * 3)
        var index = 0
        while index < stripped.count {
            var quad: [UInt8] = []
            var pads = 0
            for j in 0..<4 {
                let c = stripped[index + j]
                if c == UInt8(ascii: "=") {
                    // Padding only at the end of the last quad.
                    guard index + 4 == stripped.count, j >= 2 else { return nil }
                    pads += 1
                    quad.append(0)
                } else {
                    guard pads == 0, let v = base64Value(c) else { return nil }
                    quad.append(v)
                }
            }
            let triple = UInt32(quad[0]) << 18 | UInt32(quad[1]) << 12 | UInt32(quad[2]) << 6 | UInt32(quad[3])
            out.append(UInt8(truncatingIfNeeded: triple >> 16))
            if pads < 2 { out.append(UInt8(truncatingIfNeeded: triple >> 8)) }
            if pads < 1 { out.append(UInt8(truncatingIfNeeded: triple)) }
            index += 4
        }
        return out
    }

    private static func base64Value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// Standard base64 with padding.
    static func base64Encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(triple >> 18 & 63)])
            out.append(alphabet[Int(triple >> 12 & 63)])
            out.append(index + 1 < bytes.count ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
