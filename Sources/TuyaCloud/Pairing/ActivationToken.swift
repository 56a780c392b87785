import IPCWire

/// The pairing token the app's scan makes the cloud send to the direct link (PROTOCOL.md 9.2).
///
/// Follows `src/mqtt_service.c`, `tuya_protocol_message_parse_process` (pv2.2 opened with the link's
/// cipher key, authkey[0..15]; the JSON must have `protocol`, `t` and `data`) and
/// `src/mqtt_bind.c`, `mqtt_bind_activate_token_on` (`data.token` and `data.region` required,
/// `data.env` optional and `pro` when absent; at most 8, 2 and 4 characters: `MAX_LENGTH_TOKEN`,
/// `MAX_LENGTH_REGION`, `MAX_LENGTH_REGIST`).
///
/// As the SDK's `pv22_packet_decode`, the frame's CRC is not checked and `from` may be in either
/// byte order; unlike it, a frame that decrypts to garbage is refused as sealed with another key.
public struct ActivationToken: Sendable, Equatable, Codable {
    public var token: String
    public var region: String
    public var env: String

    public init(token: String, region: String, env: String) {
        self.token = token
        self.region = region
        self.env = env
    }

    /// The protocol number of the token message (`PRO_MQ_ACTIVE_TOKEN_ON`).
    public static let protocolNumber: Int64 = 46

    public static func decode(_ payload: some Collection<UInt8>, authkey: String) throws(TuyaCloudError) -> ActivationToken {
        let key: LocalKey
        do {
            key = try LocalKey(String(decoding: Array(authkey.utf8.prefix(16)), as: UTF8.self))
        } catch {
            throw .invalidInput(field: "authkey", why: "its first 16 bytes are not a usable AES key")
        }
        guard payload.count <= maxPayloadBytes else { throw .answerTooLarge(size: payload.count, limit: maxPayloadBytes) }
        let json: [UInt8]
        do {
            json = try PV22.open(payload, key: key, fromOrder: .eitherOrder, verifyChecksum: false).json
        } catch {
            switch error {
            case .headerTooShort, .wrongVersionPrefix: throw .notPV22(error.description)
            case .wrongKey, .decryptionFailed: throw .wrongKey("the pairing message does not open with authkey[0..15]")
            default: throw .malformedAnswer(error.description)
            }
        }
        let root: JSONValue
        do { root = try JSONValue.parse(json) } catch { throw .malformedAnswer("token message: \(error)") }
        guard case .object(let fields) = root else { throw .malformedAnswer("token message is not a JSON object") }
        guard let proto = fields["protocol"] else { throw .missingField("protocol") }
        guard fields["t"] != nil else { throw .missingField("t") }
        guard let data = fields["data"] else { throw .missingField("data") }
        let number: Int64
        switch proto {
        case .int(let n): number = n
        case .double(let d): number = JSONObjectReader.saturating(d)
        default: throw .wrongType(field: "protocol", expected: "a number")
        }
        guard number == protocolNumber else { throw .notTokenMessage(protocol: number) }
        guard case .object(let d) = data else { throw .wrongType(field: "data", expected: "an object") }
        let token = try string(d, "token", max: 8)
        let region = try string(d, "region", max: 2)
        let env = d["env"] == nil || d["env"] == .null ? "pro" : try string(d, "env", max: 4)
        return ActivationToken(token: token, region: region, env: env)
    }

    private static func string(_ d: [String: JSONValue], _ key: String, max: Int) throws(TuyaCloudError) -> String {
        guard let v = d[key], v != .null else { throw .missingField("data." + key) }
        guard case .string(let s) = v else { throw .wrongType(field: "data." + key, expected: "a string") }
        guard !s.isEmpty else { throw .invalidValue(field: "data." + key, why: "is empty") }
        guard s.utf8.count <= max else {
            throw .invalidValue(field: "data." + key, why: "has \(s.utf8.count) characters; the SDK takes at most \(max)")
        }
        do { try TuyaLicence.checkPrintable(s, field: "data." + key, topicLevel: false) } catch {
            throw .invalidValue(field: "data." + key, why: "contains characters the SDK would print unescaped into JSON or a URL")
        }
        return s
    }

    /// Seals a token message as the cloud would (pv2.2 with authkey[0..15]): for the stand-in and
    /// the tests. `fromByteOrder` lets a test send either order.
    public static func seal(_ token: ActivationToken, authkey: String, t: Int64, seq: UInt32 = 1,
                            fromByteOrder: PV22.FromByteOrder = .littleEndian) throws(TuyaCloudError) -> [UInt8] {
        let text = #"{"protocol":46,"t":\#(t),"data":{"token":""# + token.token + #"","region":""# + token.region
            + #"","env":""# + token.env + #""}}"#
        do {
            let key = try LocalKey(String(decoding: Array(authkey.utf8.prefix(16)), as: UTF8.self))
            return try PV22.seal(Array(text.utf8), header: SealHeader(seq: seq, from: 1), key: key, fromByteOrder: fromByteOrder)
        } catch {
            throw .invalidInput(field: "authkey", why: error.description)
        }
    }
}
