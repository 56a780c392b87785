import Foundation

/// The `auth` of a 302 offer (PROTOCOL.md 4): standard Base64, with padding, of
/// HMAC-SHA256(key = p2pPassword + ":" + localKey, message = devId), all UTF-8.
/// The same for every session, so never enough on its own to open a link.
public enum P2PAuth {
    public static func compute(p2pPassword: String, localKey: String, devId: String) -> String {
        // libcrypto failing to compute an HMAC leaves "", which `verify` never accepts.
        guard let mac = WireCrypto.hmacSHA256(key: Array((p2pPassword + ":" + localKey).utf8), message: Array(devId.utf8)) else {
            return ""
        }
        return Data(mac).base64EncodedString()
    }

    /// Whether `auth` is the right value, compared in time that does not depend on where the
    /// strings differ.
    public static func verify(_ auth: String, p2pPassword: String, localKey: String, devId: String) -> Bool {
        let expected = compute(p2pPassword: p2pPassword, localKey: localKey, devId: devId)
        return !expected.isEmpty && constantTimeEqual(Array(auth.utf8), Array(expected.utf8))
    }

    /// Compares every byte of the longer input whatever the differences; lengths are not secret.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff: UInt8 = a.count == b.count ? 0 : 1
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            diff |= x ^ y
        }
        return diff == 0
    }
}
