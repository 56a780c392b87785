/// What the Tuya IoT platform issues per device (PROTOCOL.md 9): the product id (`productKey`,
/// `p` in the QR code), and the licence pair `uuid` + `authkey`. `include/tuya_iot.h` sizes them:
/// product id up to 16 characters, uuid up to 25, authkey 32.
///
/// The SDK prints each into URLs, signatures and JSON with `%s`, unescaped: so each must be printable
/// ASCII without the characters that would change what it is printed into.
public struct TuyaLicence: Sendable, Equatable, Codable {
    public let productKey: String
    public let uuid: String
    public let authkey: String

    public init(productKey: String, uuid: String, authkey: String) throws(TuyaCloudError) {
        try Self.check(productKey, field: "productKey", maxLength: 16)
        try Self.check(uuid, field: "uuid", maxLength: 25, topicLevel: true)
        try Self.check(authkey, field: "authkey", maxLength: 32)
        guard authkey.utf8.count >= 16 else {
            throw .invalidInput(field: "authkey", why: "must have 32 characters (at least 16 for its AES key), has \(authkey.utf8.count)")
        }
        self.productKey = productKey
        self.uuid = uuid
        self.authkey = authkey
    }

    /// Refuses an empty value, a value longer than the SDK's buffer, and any character that is not
    /// printable ASCII or that would break the URL query (`&`, `=`), the sign string (`|`) or the
    /// JSON text (`"`, `\`) it is printed into.
    static func check(_ value: String, field: String, maxLength: Int, topicLevel: Bool = false) throws(TuyaCloudError) {
        guard !value.isEmpty else { throw .invalidInput(field: field, why: "is empty") }
        guard value.utf8.count <= maxLength else {
            throw .invalidInput(field: field, why: "has \(value.utf8.count) characters; the SDK holds at most \(maxLength)")
        }
        try checkPrintable(value, field: field, topicLevel: topicLevel)
    }

    /// `topicLevel`: the value also names an MQTT topic level (uuid, devId), so `/`, `+` and `#`
    /// are refused too.
    static func checkPrintable(_ value: String, field: String, topicLevel: Bool = false) throws(TuyaCloudError) {
        let forbidden: Set<UInt8> = [UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "|"), UInt8(ascii: "\""),
                                     UInt8(ascii: "\\"), UInt8(ascii: "?")]
        let topicForbidden: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "#")]
        for byte in value.utf8 {
            guard byte > 0x20, byte < 0x7F, !forbidden.contains(byte), !(topicLevel && topicForbidden.contains(byte)) else {
                throw .invalidInput(field: field, why: "contains a character that cannot be printed unescaped into a URL, a signature or JSON")
            }
        }
    }
}
