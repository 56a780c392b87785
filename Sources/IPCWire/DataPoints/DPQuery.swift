/// A data point query (app -> device, protocol 31, PROTOCOL.md 8.3):
/// `{"devId":"<devId>","uid":"<app user id>","dpIds":[145,149]}`. The device reports the listed
/// DPs, or all of them when `dpIds` is absent or empty.
public struct DPQuery: Sendable, Equatable, Hashable {
    public var devId: String
    public var uid: String
    /// The DPs asked for, as listed; nil when absent.
    public var dpIds: [DPId]?

    public init(devId: String, uid: String, dpIds: [DPId]? = nil) {
        self.devId = devId
        self.uid = uid
        self.dpIds = dpIds
    }

    /// True when the query asks for every DP (`dpIds` absent or empty).
    public var asksForAll: Bool { dpIds?.isEmpty ?? true }

    /// Decodes the `data` of a 31 envelope. Strict: `devId` and `uid` strings; `dpIds`, when
    /// present, an array of integers each within `dpIdRange` (refused naming `data.dpIds[i]`).
    public static func decode(envelopeData: JSONValue) throws(WireError) -> DPQuery {
        let r = try JSONObjectReader(envelopeData, path: "data")
        let devId = try r.string("devId")
        let uid = try r.string("uid")
        var ids: [DPId]?
        if r.has("dpIds") {
            var list: [DPId] = []
            for (i, raw) in try r.intArray("dpIds").enumerated() {
                guard raw >= Int64(dpIdRange.lowerBound), raw <= Int64(dpIdRange.upperBound) else {
                    throw .invalidValue(field: r.fieldPath("dpIds") + "[\(i)]", value: String(raw),
                                        expected: "a DP id, \(dpIdRange.lowerBound)-\(dpIdRange.upperBound)")
                }
                list.append(DPId(raw))
            }
            ids = list
        }
        return DPQuery(devId: devId, uid: uid, dpIds: ids)
    }

    /// The `data` of a 31 envelope.
    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = ["devId": .string(devId), "uid": .string(uid)]
        if let dpIds { o["dpIds"] = .array(dpIds.map { .int(Int64($0)) }) }
        return .object(o)
    }

    /// A 31 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .dpQuery, pv: pv, t: t, data: envelopeData)
    }
}
