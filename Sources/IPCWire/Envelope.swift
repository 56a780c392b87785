/// The protocol numbers of PROTOCOL.md 2.
public enum ProtocolNumber: Int64, Sendable, CaseIterable {
    /// Data point report, device -> app (PROTOCOL.md 8.3).
    case dpReport = 4
    /// Data point command, app -> device (PROTOCOL.md 8.3).
    case dpSet = 5
    /// Data point query, app -> device (PROTOCOL.md 8.3).
    case dpQuery = 31
    /// Doorbell press, device -> app (PROTOCOL.md 8.1).
    case doorbellPress = 43
    /// WebRTC signalling (PROTOCOL.md 4).
    case webrtcSignalling = 302
    /// Call signalling (PROTOCOL.md 3).
    case callSignalling = 308
    /// Capability probe **[ours]** (PROTOCOL.md 5).
    case capabilityProbe = 309
    /// Speaker and clarity (PROTOCOL.md 8.6).
    case streamControl = 312
}

/// One message on the in/out topics (PROTOCOL.md 2):
/// `{"protocol": 308, "pv": "2.2", "t": 1732200000, "data": { ... }}`.
public struct Envelope: Sendable, Equatable {
    public var protocolNumber: ProtocolNumber
    /// Protocol version as sent; informational in plain mode.
    public var pv: String?
    /// Sender's clock, unix seconds.
    public var t: Int64
    /// The body; always a JSON object.
    public var data: JSONValue

    public init(protocolNumber: ProtocolNumber, pv: String? = nil, t: Int64, data: JSONValue) {
        self.protocolNumber = protocolNumber
        self.pv = pv
        self.t = t
        self.data = data
    }

    /// Decodes a plain (unprotected) payload. Refuses payloads over 64 KiB before reading them.
    public static func decode(_ payload: some Collection<UInt8>) throws(WireError) -> Envelope {
        guard payload.count <= maxPayloadBytes else {
            throw .payloadTooLarge(size: payload.count, limit: maxPayloadBytes)
        }
        return try decode(json: JSONValue.parse(payload))
    }

    /// Decodes an already parsed JSON document.
    public static func decode(json: JSONValue) throws(WireError) -> Envelope {
        let root = try JSONObjectReader(json, path: "")
        let number = try root.int("protocol")
        guard let proto = ProtocolNumber(rawValue: number) else { throw .unknownProtocol(number) }
        // `t` is the sender's clock: any integral number is read (saturating), never trapped on.
        let t = try root.saturatingInt("t")
        let pv = try root.optionalString("pv")
        let data = try root.object("data")
        return Envelope(protocolNumber: proto, pv: pv, t: t, data: .object(data.fields))
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "protocol": .int(protocolNumber.rawValue),
            "t": .int(t),
            "data": data,
        ]
        if let pv { o["pv"] = .string(pv) }
        return .object(o)
    }

    /// The plain payload: compact JSON.
    public func encoded() -> [UInt8] { json.serialized() }
}
