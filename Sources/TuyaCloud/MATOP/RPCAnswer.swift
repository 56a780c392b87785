import IPCWire

/// The cloud's answer to an `RPCRequest`, from `rpc/rsp/<devId>` (PROTOCOL.md 9.4).
///
/// Follows `src/matop_service.c`, `matop_service_data_receive_cb`: a numeric `id` and a `data`
/// object are required; `data.result.success` true means success and `data.result.result` is the
/// result; `data.t` is the cloud's time. For the upgrade check, a success whose result is absent,
/// null or empty means "no upgrade" (`matop_upgrade_info_on` raises no event then).
public struct RPCAnswer: Sendable, Equatable {
    public var id: UInt16
    public var success: Bool
    public var result: JSONValue?
    public var t: Int64?

    public init(id: UInt16, success: Bool, result: JSONValue?, t: Int64?) {
        self.id = id
        self.success = success
        self.result = result
        self.t = t
    }

    public static func decode(_ payload: some Collection<UInt8>) throws(TuyaCloudError) -> RPCAnswer {
        guard payload.count <= maxPayloadBytes else { throw .answerTooLarge(size: payload.count, limit: maxPayloadBytes) }
        let root: JSONValue
        do { root = try JSONValue.parse(payload) } catch { throw .malformedAnswer("rpc answer: \(error)") }
        guard case .object(let o) = root else { throw .malformedAnswer("rpc answer is not a JSON object") }
        let id: UInt16
        switch o["id"] {
        case .int(let i)?: id = UInt16(truncatingIfNeeded: i)
        case .double(let d)?: id = UInt16(truncatingIfNeeded: JSONObjectReader.saturating(d))
        case nil: throw .missingField("id")
        default: throw .wrongType(field: "id", expected: "a number")
        }
        guard let data = o["data"], data != .null else { throw .missingField("data") }
        guard case .object(let d) = data else { throw .wrongType(field: "data", expected: "an object") }
        var success = false
        var result: JSONValue?
        if case .object(let r)? = d["result"] {
            success = r["success"] == .bool(true)
            result = r["result"]
        }
        var t: Int64?
        if case .int(let i)? = d["t"] { t = i }
        return RPCAnswer(id: id, success: success, result: result, t: t)
    }

    /// Whether an upgrade-check answer offers nothing: a success with no result, null, `{}`, `[]`
    /// or `"none"`.
    public var offersNoUpgrade: Bool {
        guard success else { return true }
        switch result {
        case nil, .null?: return true
        case .object(let o)?: return o.isEmpty
        case .array(let a)?: return a.isEmpty
        case .string(let s)?: return s.isEmpty || s == "none"
        default: return false
        }
    }

    /// The answer the stand-in gives: `{"id":<id>,"data":{"result":{"success":true,"result":<result>},"t":<t>}}`.
    public static func text(id: UInt16, success: Bool, resultJSON: String, t: Int64) -> String {
        #"{"id":\#(id),"data":{"result":{"success":\#(success),"result":"# + resultJSON + #"},"t":\#(t)}}"#
    }
}
