/// A data point command (app -> device, protocol 5, PROTOCOL.md 8.3):
/// `{"devId":"<devId>","uid":"<app user id>","dps":{"149":true}}`.
///
/// The `dps` are kept raw (key and JSON value as received) so the DP store can refuse each DP on
/// its own and say why (PROTOCOL.md 8.3: a read-only DP, a wrong type, a value out of range, an id
/// the device lacks); only the envelope's shape is checked here. A key that is not a DP id (`"abc"`)
/// is kept too, so it can be counted.
public struct DPSet: Sendable {
    public var devId: String
    public var uid: String
    /// Every member of `dps`: DP ids in numeric order first (`DPKey.id`), then other keys by text.
    public private(set) var dps: [(key: String, value: JSONValue)]

    public init(devId: String, uid: String, dps: [(key: String, value: JSONValue)]) {
        self.devId = devId
        self.uid = uid
        var byKey: [String: JSONValue] = [:]
        for member in dps { byKey[member.key] = member.value }
        self.dps = byKey.sorted { DPKey.precedes($0.key, $1.key) }.map { (key: $0.key, value: $0.value) }
    }

    /// A command setting typed values.
    public init(devId: String, uid: String, values: [DPId: DPValue]) {
        self.init(devId: devId, uid: uid, dps: values.map { (key: DPKey.key($0.key), value: $0.value.json) })
    }

    /// Decodes the `data` of a 5 envelope. Strict on the shape: `devId` and `uid` strings, `dps`
    /// an object (empty is allowed: it sets nothing). Its members are not judged here.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> DPSet {
        let r = try JSONObjectReader(envelopeData, path: "data")
        let devId = try r.string("devId")
        let uid = try r.string("uid")
        let dps = try r.object("dps")
        return DPSet(devId: devId, uid: uid, dps: dps.fields.map { (key: $0.key, value: $0.value) })
    }

    /// The `data` of a 5 envelope.
    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = [:]
        for member in dps { o[member.key] = member.value }
        return .object(["devId": .string(devId), "uid": .string(uid), "dps": .object(o)])
    }

    /// A 5 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .dpSet, pv: pv, t: t, data: envelopeData)
    }
}

extension DPSet: Equatable, Hashable {
    public static func == (a: DPSet, b: DPSet) -> Bool {
        a.devId == b.devId && a.uid == b.uid && a.dps.count == b.dps.count
            && zip(a.dps, b.dps).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(devId)
        hasher.combine(uid)
        for member in dps {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
