/// Everything that can be wrong with what the Tuya cloud (or a stand-in) sent, or with the inputs a
/// request is built from (PROTOCOL.md 9). Each case names what was wrong; none carries a key.
public enum TuyaCloudError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One of our own inputs (uuid, authkey, productKey, a version...) cannot go on the wire.
    case invalidInput(field: String, why: String)
    /// The answer is larger than the SDK's buffer for it, and was refused unread.
    case answerTooLarge(size: Int, limit: Int)
    /// The answer is not JSON (or not the JSON object expected).
    case malformedAnswer(String)
    /// A field the SDK requires is absent (the path names it: `httpsSelfUrl.addr`).
    case missingField(String)
    /// A field has the wrong JSON type.
    case wrongType(field: String, expected: String)
    /// A field has a value that cannot be used (a URL without host, a key of the wrong length...).
    case invalidValue(field: String, why: String)
    /// A base64 field does not decode.
    case badBase64(field: String)
    /// The bytes do not decrypt as AES-128-ECB with PKCS#7 (length not whole blocks).
    case decryptionFailed(String)
    /// The bytes decrypt, but to garbage: they were sealed with another key.
    case wrongKey(String)
    /// A pairing message is not a pv2.2 frame at all.
    case notPV22(String)
    /// A pairing message is pv2.2 and decrypts, but it is not protocol 46.
    case notTokenMessage(protocol: Int64)
    /// The ATOP API answered `success:false`.
    case refused(ATOPRefusal)

    public var description: String {
        switch self {
        case .invalidInput(let field, let why): "invalid \(field): \(why)"
        case .answerTooLarge(let size, let limit): "answer of \(size) bytes exceeds the \(limit)-byte limit"
        case .malformedAnswer(let why): "answer is not the JSON expected: \(why)"
        case .missingField(let path): "answer lacks the field '\(path)'"
        case .wrongType(let field, let expected): "field '\(field)' must be \(expected)"
        case .invalidValue(let field, let why): "field '\(field)' is unusable: \(why)"
        case .badBase64(let field): "field '\(field)' is not base64"
        case .decryptionFailed(let why): "does not decrypt: \(why)"
        case .wrongKey(let why): "sealed with another key: \(why)"
        case .notPV22(let why): "not a pv2.2 frame: \(why)"
        case .notTokenMessage(let p): "protocol \(p) on the pairing topic, not 46"
        case .refused(let refusal): refusal.description
        }
    }
}
