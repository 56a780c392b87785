import IPCWire

/// What a successful activation returns (PROTOCOL.md 9.3).
///
/// Follows `src/tuya_iot.c`: `activate_response_parse` requires `schema` and `schemaId`;
/// `activated_data_read` / `activate_json_string_parse` then require `devId`, `secKey`, `localKey`,
/// `schemaId` and `stdTimeZone`; `resetFactory` true means the app reset the device to factory
/// settings (the SDK raises `TUYA_EVENT_RESET`). The keys must be 16 characters here (the SDK copies
/// them into 16-character buffers and uses them as AES-128 keys).
public struct ActivationResult: Sendable, Equatable, Codable {
    public var devId: String
    public var secKey: String
    public var localKey: String
    public var schemaId: String
    /// The schema as sent (a JSON text).
    public var schema: String
    public var stdTimeZone: String
    public var resetFactory: Bool
    /// The schema parsed; empty when it does not parse (`schemaProblem` says why): the SDK never
    /// reads it, so a bad schema does not fail the activation.
    public var dataPoints: [DPDefinition]
    public var schemaProblem: String?

    public init(devId: String, secKey: String, localKey: String, schemaId: String, schema: String, stdTimeZone: String,
                resetFactory: Bool = false) {
        self.devId = devId
        self.secKey = secKey
        self.localKey = localKey
        self.schemaId = schemaId
        self.schema = schema
        self.stdTimeZone = stdTimeZone
        self.resetFactory = resetFactory
        do {
            self.dataPoints = try DPDefinition.parseSchema(schema)
            self.schemaProblem = nil
        } catch {
            self.dataPoints = []
            self.schemaProblem = error.description
        }
    }

    /// Reads the activation answer. A refusal throws `.refused`.
    public static func decode(_ answer: ATOPAnswer) throws(TuyaCloudError) -> ActivationResult {
        if let refusal = answer.refusal { throw .refused(refusal) }
        guard let result = answer.result, result != .null else { throw .missingField("result") }
        guard case .object(let o) = result else { throw .wrongType(field: "result", expected: "an object") }
        func string(_ key: String) throws(TuyaCloudError) -> String {
            guard let v = o[key], v != .null else { throw .missingField("result." + key) }
            switch v {
            case .string(let s): return s
            case .int(let i) where key == "schemaId": return String(i)
            default: throw .wrongType(field: "result." + key, expected: "a string")
            }
        }
        let schema = try string("schema")
        let schemaId = try string("schemaId")
        let devId = try string("devId")
        let secKey = try string("secKey")
        let localKey = try string("localKey")
        let timeZone = try string("stdTimeZone")
        guard !devId.isEmpty else { throw .invalidValue(field: "result.devId", why: "is empty") }
        do { try TuyaLicence.checkPrintable(devId, field: "result.devId", topicLevel: true) } catch {
            throw .invalidValue(field: "result.devId", why: "cannot name an MQTT topic or be signed unescaped")
        }
        for (name, key) in [("secKey", secKey), ("localKey", localKey)] where key.utf8.count != 16 || !key.unicodeScalars.allSatisfy(\.isASCII) {
            throw .invalidValue(field: "result." + name, why: "must be 16 ASCII characters, has \(key.utf8.count) bytes")
        }
        let reset = o["resetFactory"] == .bool(true)
        return ActivationResult(devId: devId, secKey: secKey, localKey: localKey, schemaId: schemaId, schema: schema,
                                stdTimeZone: timeZone, resetFactory: reset)
    }
}
