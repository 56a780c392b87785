/// Any message the wire can carry, decoded by protocol number and body type, so the device
/// glue (and the app simulator) does one exhaustive switch.
public enum InboundMessage: Sendable, Equatable {
    /// 308 call signalling (PROTOCOL.md 3).
    case call(CallMessage)
    /// 302 WebRTC signalling (PROTOCOL.md 4).
    case signal(SignalMessage)
    /// 309 `ability_query` (app -> device, PROTOCOL.md 5).
    case abilityQuery(AbilityQuery)
    /// 309 `ability` or `meta` (device -> app, PROTOCOL.md 5).
    case abilityAnswer(AbilityAnswer)

    /// Decodes the body of an already decoded envelope.
    public static func decode(_ envelope: Envelope) throws(WireError) -> InboundMessage {
        switch envelope.protocolNumber {
        case .callSignalling:
            return .call(try CallMessage.decode(envelopeData: envelope.data))
        case .webrtcSignalling:
            return .signal(try SignalMessage.decode(envelopeData: envelope.data))
        case .capabilityProbe:
            let r = try JSONObjectReader(envelope.data, path: "data")
            switch try ProbeBodyType.decode(r) {
            case .abilityQuery: return .abilityQuery(try AbilityQuery.decode(envelopeData: envelope.data))
            case .ability, .meta: return .abilityAnswer(try AbilityAnswer.decode(envelopeData: envelope.data))
            }
        }
    }

    /// Decodes a plain payload (64 KiB limit, JSON, envelope, body).
    public static func decode(payload: some Collection<UInt8>) throws(WireError) -> (envelope: Envelope, message: InboundMessage) {
        let envelope = try Envelope.decode(payload)
        return (envelope, try decode(envelope))
    }

    /// The `data` this message encodes to (the inverse of `decode`).
    public var envelopeData: JSONValue {
        switch self {
        case .call(let m): m.envelopeData
        case .signal(let m): m.envelopeData
        case .abilityQuery(let m): m.envelopeData
        case .abilityAnswer(let m): m.envelopeData
        }
    }

    public var protocolNumber: ProtocolNumber {
        switch self {
        case .call: .callSignalling
        case .signal: .webrtcSignalling
        case .abilityQuery, .abilityAnswer: .capabilityProbe
        }
    }
}
