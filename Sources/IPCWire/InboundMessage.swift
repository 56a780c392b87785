/// Any message the wire can carry, decoded by protocol number and body type, so the device
/// glue (and the app simulator) does one exhaustive switch.
public enum InboundMessage: Sendable, Equatable {
    /// 308 call signalling, `type` `rtc` (PROTOCOL.md 3).
    case call(CallMessage)
    /// 302 WebRTC signalling (PROTOCOL.md 4).
    case signal(SignalMessage)
    /// 309 `ability_query` (app -> device, PROTOCOL.md 5).
    case abilityQuery(AbilityQuery)
    /// 309 `ability` or `meta` (device -> app, PROTOCOL.md 5).
    case abilityAnswer(AbilityAnswer)
    /// 308 `type` `video_doorbell` (both ways, PROTOCOL.md 8.2).
    case videoDoorbell(VideoDoorbellMessage)
    /// 43 doorbell press (device -> app, PROTOCOL.md 8.1).
    case doorbellPress(DoorbellPressMessage)
    /// 4 data point report (device -> app, PROTOCOL.md 8.3).
    case dpReport(DPReport)
    /// 5 data point command (app -> device, PROTOCOL.md 8.3).
    case dpSet(DPSet)
    /// 31 data point query (app -> device, PROTOCOL.md 8.3).
    case dpQuery(DPQuery)
    /// 312 speaker or clarity command, or its reply (PROTOCOL.md 8.6).
    case streamControl(StreamControlMessage)

    /// Decodes the body of an already decoded envelope.
    public static func decode(_ envelope: Envelope) throws(WireError) -> InboundMessage {
        switch envelope.protocolNumber {
        case .callSignalling:
            // 308 carries §3 calls (`rtc`) and doorbell calls (`video_doorbell`, PROTOCOL.md 8.2).
            let r = try JSONObjectReader(envelope.data, path: "data")
            let type = try r.string("type")
            switch type {
            case CallMessage.bodyType: return .call(try CallMessage.decode(envelopeData: envelope.data))
            case videoDoorbellBodyType: return .videoDoorbell(try VideoDoorbellMessage.decode(envelopeData: envelope.data))
            default:
                throw .invalidValue(field: "data.type", value: "'\(type)'",
                                    expected: "'\(CallMessage.bodyType)' or '\(videoDoorbellBodyType)'")
            }
        case .webrtcSignalling:
            return .signal(try SignalMessage.decode(envelopeData: envelope.data))
        case .capabilityProbe:
            let r = try JSONObjectReader(envelope.data, path: "data")
            switch try ProbeBodyType.decode(r) {
            case .abilityQuery: return .abilityQuery(try AbilityQuery.decode(envelopeData: envelope.data))
            case .ability, .meta: return .abilityAnswer(try AbilityAnswer.decode(envelopeData: envelope.data))
            }
        case .doorbellPress:
            return .doorbellPress(try DoorbellPressMessage.decode(envelopeData: envelope.data))
        case .dpReport:
            return .dpReport(try DPReport.decode(envelopeData: envelope.data))
        case .dpSet:
            return .dpSet(try DPSet.decode(envelopeData: envelope.data))
        case .dpQuery:
            return .dpQuery(try DPQuery.decode(envelopeData: envelope.data))
        case .streamControl:
            return .streamControl(try StreamControlMessage.decode(envelopeData: envelope.data))
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
        case .videoDoorbell(let m): m.envelopeData
        case .doorbellPress(let m): m.envelopeData
        case .dpReport(let m): m.envelopeData
        case .dpSet(let m): m.envelopeData
        case .dpQuery(let m): m.envelopeData
        case .streamControl(let m): m.envelopeData
        }
    }

    public var protocolNumber: ProtocolNumber {
        switch self {
        case .call, .videoDoorbell: .callSignalling
        case .signal: .webrtcSignalling
        case .abilityQuery, .abilityAnswer: .capabilityProbe
        case .doorbellPress: .doorbellPress
        case .dpReport: .dpReport
        case .dpSet: .dpSet
        case .dpQuery: .dpQuery
        case .streamControl: .streamControl
        }
    }
}
