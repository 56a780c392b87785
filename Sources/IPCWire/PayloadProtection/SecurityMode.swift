/// The profile option `security` (PROTOCOL.md 2.1): how an MQTT payload wraps the envelope JSON.
public enum SecurityMode: String, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// The envelope JSON is the payload.
    case plain = "plain"
    /// `"2.2"` | crc32 | seq | from | AES-128-ECB(PKCS#7 JSON).
    case pv22 = "pv2.2"
    /// `"2.3"` | seq | from | 0 | nonce | AES-128-GCM(JSON) | tag.
    case pv23 = "pv2.3"

    /// Parses the profile string (`plain`, `pv2.2`, `pv2.3`).
    public init(profileValue: String) throws(WireError) {
        guard let mode = SecurityMode(rawValue: profileValue) else {
            throw .invalidValue(field: "security", value: "'\(profileValue)'", expected: "plain, pv2.2 or pv2.3")
        }
        self = mode
    }

    /// The 3 ASCII bytes a protected payload starts with; nil for plain.
    public var versionPrefix: [UInt8]? {
        switch self {
        case .plain: nil
        case .pv22: Array("2.2".utf8)
        case .pv23: Array("2.3".utf8)
        }
    }

    public var description: String { rawValue }
}
