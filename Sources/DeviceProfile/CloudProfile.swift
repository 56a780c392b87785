import Foundation

// The profile's `cloud` section (PROTOCOL.md 9, its inputs): what a device needs to join the Tuya
// cloud. Parsed and validated here; the cloud join itself is a sans-IO machine elsewhere.

extension DeviceProfile {
    /// A device's Tuya cloud licence (PROTOCOL.md 9 inputs). Absent: the device never joins.
    public struct Cloud: Sendable, Equatable {
        /// The product id (`p` of the pairing QR code, `productKey` of activation).
        public var productKey: String
        /// The licence's uuid (`acon_<uuid>` while pairing).
        public var uuid: String
        /// The licence's key: exactly 32 ASCII letters or digits (PROTOCOL.md 9; its first 16 key
        /// the pairing token and activation).
        public var authkey: String
        /// The region, when known in advance (9.1: absent until the token gives it).
        public var region: String?
        /// Where the region, env and activation results are kept across restarts (absolute path);
        /// nil: the caller picks one.
        public var stateDir: String?
        /// An iotdns address other than `https://h2.iot-dns.com` (private clouds, tests; 9.1).
        public var iotdnsURL: String?
        /// The CA (PEM or DER file, absolute path) that iotdns address is checked against, instead
        /// of the SDK's embedded one (9.1).
        public var iotdnsCAFile: String?

        public init(productKey: String, uuid: String, authkey: String, region: String? = nil, stateDir: String? = nil,
                    iotdnsURL: String? = nil, iotdnsCAFile: String? = nil) {
            self.productKey = productKey
            self.uuid = uuid
            self.authkey = authkey
            self.region = region
            self.stateDir = stateDir
            self.iotdnsURL = iotdnsURL
            self.iotdnsCAFile = iotdnsCAFile
        }

        /// The authkey's 32 bytes.
        public var authkeyBytes: [UInt8] { Array(authkey.utf8) }

        public static let authkeyLength = 32
    }
}

// MARK: - Parsing

extension ProfileParser {
    static let cloudKeys = ["productKey", "uuid", "authkey", "region", "stateDir", "iotdnsURL", "iotdnsCAFile"]

    func cloud(_ top: MappingReader) -> Profile.Cloud?? {
        guard let node = top["cloud"] else { return .some(nil) }
        guard let m = diagnostics.mapping(node, at: "cloud", allowed: Self.cloudKeys) else { return nil }
        let before = diagnostics.errors.count
        let productKey = m.requiredString("productKey", expected: "the product id from the Tuya IoT platform") {
            Self.tokenProblem($0, what: "a product id", maxLength: 64)
        }
        let uuid = m.requiredString("uuid", expected: "the licence's uuid") {
            Self.tokenProblem($0, what: "a licence uuid", maxLength: 64)
        }
        let authkey = m.requiredString("authkey", expected: "the licence's authkey (32 letters or digits)", check: Self.authkeyProblem)
        let region = m.string("region", expected: "a region code such as EU") {
            Self.tokenProblem($0, what: "a region code such as EU", maxLength: 16)
        }
        let stateDir = m.string("stateDir", expected: "a folder path") { text in
            text.isEmpty ? "expected a folder path, got an empty string" : nil
        }
        let iotdnsURL = m.string("iotdnsURL", expected: "an https:// url") { text in
            guard let c = URLComponents(string: text), c.scheme?.lowercased() == "https", let host = c.host, !host.isEmpty else {
                return "expected an https:// url with a host, got '\(text)'"
            }
            return nil
        }
        let iotdnsCAFile = m.string("iotdnsCAFile", expected: "a file path") { text in
            if text.isEmpty { return "expected a file path, got an empty string" }
            let full = self.resolve(text)
            return FileManager.default.fileExists(atPath: full) ? nil : "file not found: \(full)"
        }
        guard diagnostics.errors.count == before, let productKey, let uuid, let authkey else { return nil }
        if let node = m["iotdnsCAFile"], iotdnsURL == nil {
            diagnostics.add(.inconsistent, at: node.mark, field: m.field("iotdnsCAFile"),
                            "iotdnsCAFile goes with iotdnsURL (the SDK's own iotdns address uses its embedded CA)")
            return nil
        }
        return .some(Profile.Cloud(
            productKey: productKey, uuid: uuid, authkey: authkey, region: region, stateDir: stateDir.map(resolve),
            iotdnsURL: iotdnsURL, iotdnsCAFile: iotdnsCAFile.map(resolve)))
    }

    /// 1 to `maxLength` ASCII letters, digits, `_` or `-`.
    static func tokenProblem(_ s: String, what: String, maxLength: Int) -> String? {
        let ok = !s.isEmpty && s.utf8.count <= maxLength && s.unicodeScalars.allSatisfy {
            $0.value < 0x80 && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-")
        }
        return ok ? nil : "expected \(what): 1 to \(maxLength) ASCII letters, digits, '_' or '-', got '\(s)'"
    }

    static func authkeyProblem(_ s: String) -> String? {
        if let bad = s.unicodeScalars.first(where: { !($0.value < 0x80 && CharacterSet.alphanumerics.contains($0)) }) {
            let shown = bad.value < 0x20 || bad.value > 0x7E ? String(format: "U+%04X", bad.value) : "'\(bad)'"
            return "expected exactly 32 ASCII letters or digits, got the character \(shown)"
        }
        let n = s.utf8.count
        return n == Profile.Cloud.authkeyLength ? nil
            : "expected exactly 32 ASCII letters or digits, got \(n) character\(n == 1 ? "" : "s")"
    }
}
