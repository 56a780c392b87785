/// A data point report (device -> out topic, protocol 4, PROTOCOL.md 8.3):
/// `{"devId":"<devId>","dps":{"136":"1732200000","149":true},"t":1732200000}`.
public struct DPReport: Sendable, Equatable, Hashable {
    public var devId: String
    /// The DPs reported, ordered by id, each id once.
    public private(set) var dps: [DPEntry]
    /// When the values were read, unix seconds.
    public var t: Int64

    /// `dps` is sorted by id; of two entries with the same id the later one is kept.
    public init(devId: String, dps: [DPEntry], t: Int64) {
        self.devId = devId
        var byId: [DPId: DPValue] = [:]
        for entry in dps { byId[entry.id] = entry.value }
        self.dps = byId.sorted { $0.key < $1.key }.map { DPEntry(id: $0.key, value: $0.value) }
        self.t = t
    }

    public init(devId: String, values: [DPId: DPValue], t: Int64) {
        self.init(devId: devId, dps: values.map { DPEntry(id: $0.key, value: $0.value) }, t: t)
    }

    /// The value reported for `id`, if any.
    public subscript(id: DPId) -> DPValue? { dps.first(where: { $0.id == id })?.value }

    /// Decodes the `data` of a 4 envelope. Strict: `devId` a string, `t` an integer (saturating),
    /// `dps` an object whose every key is a DP id (`DPKey.id`) and every value a bool, an integer
    /// or a string; anything else is refused, naming the DP (`data.dps.abc`).
    public static func decode(envelopeData: JSONValue) throws(WireError) -> DPReport {
        let r = try JSONObjectReader(envelopeData, path: "data")
        let devId = try r.string("devId")
        let dps = try r.object("dps")
        var entries: [DPEntry] = []
        for (key, raw) in dps.fields.sorted(by: { DPKey.precedes($0.key, $1.key) }) {
            guard let id = DPKey.id(key) else {
                throw .invalidValue(field: dps.fieldPath(key), value: "key '\(key)'",
                                    expected: "a DP id, \(dpIdRange.lowerBound)-\(dpIdRange.upperBound) in decimal")
            }
            guard let value = DPValue(json: raw) else {
                throw .wrongType(field: dps.fieldPath(key), expected: "a bool, an integer or a string")
            }
            entries.append(DPEntry(id: id, value: value))
        }
        return DPReport(devId: devId, dps: entries, t: try r.saturatingInt("t"))
    }

    /// The `data` of a 4 envelope.
    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = [:]
        for entry in dps { o[DPKey.key(entry.id)] = entry.value.json }
        return .object(["devId": .string(devId), "dps": .object(o), "t": .int(t)])
    }

    /// A 4 envelope sent at `t` (unix seconds; usually the report's own `t`).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .dpReport, pv: pv, t: t, data: envelopeData)
    }
}
