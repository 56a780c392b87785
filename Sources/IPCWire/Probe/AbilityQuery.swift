/// The bodies of protocol 309 (PROTOCOL.md 5) by their `type`.
public enum ProbeBodyType: String, Sendable, CaseIterable, Hashable {
    /// App -> device: what can you do?
    case abilityQuery = "ability_query"
    /// Device -> app: the answer to one query.
    case ability
    /// Device -> everyone, retained on the meta topic: the same body without `targetId`/`reqId`.
    case meta

    static func decode(_ r: JSONObjectReader) throws(WireError) -> ProbeBodyType {
        let name = try r.string("type")
        guard let type = ProbeBodyType(rawValue: name) else {
            throw .invalidValue(field: r.fieldPath("type"), value: "'\(name)'", expected: "ability_query, ability or meta")
        }
        return type
    }
}

/// A capability probe (app -> device, protocol 309 **[ours]**, PROTOCOL.md 5):
/// `{"type":"ability_query","curId":"<user>","reqId":"<id>"}`.
public struct AbilityQuery: Sendable, Equatable, Hashable {
    /// The asking user; the answer's `targetId`.
    public var curId: String
    /// Echoed in the answer.
    public var reqId: String

    public init(curId: String, reqId: String) {
        self.curId = curId
        self.reqId = reqId
    }

    public static func decode(envelopeData: JSONValue) throws(WireError) -> AbilityQuery {
        let r = try JSONObjectReader(envelopeData, path: "data")
        let type = try ProbeBodyType.decode(r)
        guard type == .abilityQuery else {
            throw .invalidValue(field: "data.type", value: "'\(type.rawValue)'", expected: "'ability_query'")
        }
        return AbilityQuery(curId: try r.string("curId"), reqId: try r.string("reqId"))
    }

    public var envelopeData: JSONValue {
        .object(["type": .string(ProbeBodyType.abilityQuery.rawValue), "curId": .string(curId), "reqId": .string(reqId)])
    }

    /// A 309 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = nil) -> Envelope {
        Envelope(protocolNumber: .capabilityProbe, pv: pv, t: t, data: envelopeData)
    }
}
