/// A doorbell press (device -> out topic, protocol 43, PROTOCOL.md 8.1):
/// `{"devId":"<devId>","etype":"ac_doorbell","edata":"<callId>"}`. Sent once per press, not once
/// per user: every app of the household reads it.
public struct DoorbellPressMessage: Sendable, Equatable, Hashable {
    public var devId: String
    /// The profile's doorbell kind (`ac_doorbell` or `doorbell`), as sent.
    public var etype: String
    /// The call id (the SDK's `messageId`, see `makeDoorbellCallId(unixSeconds:using:)`).
    public var edata: String

    public init(devId: String, etype: String, edata: String) {
        self.devId = devId
        self.etype = etype
        self.edata = edata
    }

    /// The call id this press starts (`edata`).
    public var callId: String { edata }

    /// Decodes the `data` of a 43 envelope. Strict: `devId`, `etype` and `edata` must be strings.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> DoorbellPressMessage {
        let r = try JSONObjectReader(envelopeData, path: "data")
        return DoorbellPressMessage(devId: try r.string("devId"), etype: try r.string("etype"), edata: try r.string("edata"))
    }

    /// The `data` of a 43 envelope.
    public var envelopeData: JSONValue {
        .object(["devId": .string(devId), "etype": .string(etype), "edata": .string(edata)])
    }

    /// A 43 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .doorbellPress, pv: pv, t: t, data: envelopeData)
    }
}
