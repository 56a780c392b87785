import CWireCrypto

/// The primitives of pv2.2, pv2.3, the 302 `auth` and the Tuya cloud join (PROTOCOL.md 2.1, 4, 9),
/// over the system's OpenSSL libcrypto through the CWireCrypto shim: AES-128 blocks (ECB, no
/// padding), AES-128-GCM, HMAC-SHA256, SHA-256, MD5 and random bytes. Keys never appear in a
/// failure's text.
package enum WireCrypto {
    /// What libcrypto refused, named (no key material).
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package let description: String
    }

    package static let blockSize = 16
    package static let gcmNonceSize = 12
    package static let gcmTagSize = 16

    /// Encrypts or decrypts `data` in place, 16-byte block by block, with a 16-byte key.
    package static func aes128ECB(encrypt: Bool, _ data: inout ArraySlice<UInt8>, key: [UInt8]) throws(Failure) {
        guard key.count == 16 else { throw Failure(description: "the AES-128 key has \(key.count) bytes, not 16") }
        guard data.count % blockSize == 0 else {
            throw Failure(description: "\(data.count) bytes is not a whole number of 16-byte blocks")
        }
        if data.isEmpty { return }
        let ok = key.withUnsafeBufferPointer { k in
            data.withUnsafeMutableBufferPointer { d in
                cwire_aes128_ecb(k.baseAddress, k.count, encrypt ? 1 : 0, d.baseAddress, d.count)
            }
        }
        guard ok == 1 else { throw Failure(description: "libcrypto refused the AES-128 block operation") }
    }

    /// AES-128-GCM with a 12-byte nonce: the ciphertext (as long as `plain`) and the 16-byte tag.
    package static func gcmSeal(_ plain: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(Failure)
        -> (ciphertext: [UInt8], tag: [UInt8]) {
        guard key.count == 16 else { throw Failure(description: "the AES-128 key has \(key.count) bytes, not 16") }
        guard nonce.count == gcmNonceSize else { throw Failure(description: "the GCM nonce has \(nonce.count) bytes, not 12") }
        // One spare byte: a buffer is never empty, so its address is never nil.
        var out = [UInt8](repeating: 0, count: plain.count + 1)
        var tag = [UInt8](repeating: 0, count: gcmTagSize)
        let input = plain + [0]
        let additional = aad + [0]
        let ok = key.withUnsafeBufferPointer { k in
            nonce.withUnsafeBufferPointer { n in
                additional.withUnsafeBufferPointer { a in
                    input.withUnsafeBufferPointer { p in
                        out.withUnsafeMutableBufferPointer { o in
                            tag.withUnsafeMutableBufferPointer { t in
                                cwire_aes128_gcm_seal(k.baseAddress, k.count, n.baseAddress, n.count, a.baseAddress, aad.count,
                                                      p.baseAddress, plain.count, o.baseAddress, t.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        guard ok == 1 else { throw Failure(description: "libcrypto refused AES-128-GCM sealing") }
        out.removeLast()
        return (out, tag)
    }

    /// The plaintext, or nil when the tag does not authenticate the ciphertext and AAD (or a
    /// length is wrong).
    package static func gcmOpen(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard key.count == 16, nonce.count == gcmNonceSize, tag.count == gcmTagSize else { return nil }
        var out = [UInt8](repeating: 0, count: ciphertext.count + 1)
        let input = ciphertext + [0]
        let additional = aad + [0]
        let ok = key.withUnsafeBufferPointer { k in
            nonce.withUnsafeBufferPointer { n in
                additional.withUnsafeBufferPointer { a in
                    input.withUnsafeBufferPointer { c in
                        tag.withUnsafeBufferPointer { t in
                            out.withUnsafeMutableBufferPointer { o in
                                cwire_aes128_gcm_open(k.baseAddress, k.count, n.baseAddress, n.count, a.baseAddress, aad.count,
                                                      c.baseAddress, ciphertext.count, t.baseAddress, o.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        guard ok == 1 else { return nil }
        out.removeLast()
        return out
    }

    /// HMAC-SHA256 (32 bytes); nil only if libcrypto fails.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let k = key + [0], m = message + [0]
        let ok = k.withUnsafeBufferPointer { kp in
            m.withUnsafeBufferPointer { mp in
                out.withUnsafeMutableBufferPointer { o in cwire_hmac_sha256(kp.baseAddress, key.count, mp.baseAddress, message.count, o.baseAddress) }
            }
        }
        return ok == 1 ? out : nil
    }

    /// SHA-256 (32 bytes); nil only if libcrypto fails.
    package static func sha256(_ data: [UInt8]) -> [UInt8]? {
        digest(data, size: 32) { d, n, o in cwire_sha256(d, n, o) }
    }

    /// MD5 (16 bytes); nil only if libcrypto fails.
    package static func md5(_ data: [UInt8]) -> [UInt8]? {
        digest(data, size: 16) { d, n, o in cwire_md5(d, n, o) }
    }

    private static func digest(_ data: [UInt8], size: Int,
                               _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> Int32) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size)
        let input = data + [0]
        let ok = input.withUnsafeBufferPointer { d in out.withUnsafeMutableBufferPointer { o in function(d.baseAddress, data.count, o.baseAddress) } }
        return ok == 1 ? out : nil
    }

    /// `count` bytes from the system's cryptographic random source; nil only if it fails.
    package static func randomBytes(_ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: max(1, count))
        let ok = out.withUnsafeMutableBufferPointer { o in cwire_random_bytes(o.baseAddress, max(0, count)) }
        guard ok == 1 else { return nil }
        return Array(out.prefix(max(0, count)))
    }
}
