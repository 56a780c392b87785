/// The `msg` of a 302 message, by `header.type`.
public enum SignalBody: Sendable, Equatable, Hashable {
    case offer(SignalOffer)
    case answer(SignalAnswer)
    case candidate(ICECandidate)
    case disconnect(SignalDisconnect)
    case resolution(SignalResolution)

    public var type: SignalType {
        switch self {
        case .offer: .offer
        case .answer: .answer
        case .candidate: .candidate
        case .disconnect: .disconnect
        case .resolution: .resolution
        }
    }

    var json: JSONValue {
        switch self {
        case .offer(let m): m.json
        case .answer(let m): m.json
        case .candidate(let m): m.json
        case .disconnect(let m): m.json
        case .resolution(let m): m.json
        }
    }
}

/// One 302 WebRTC signalling message (PROTOCOL.md 4): the `data` of
/// `{"protocol":302,"data":{"header":{...},"msg":{...}}}`.
public struct SignalMessage: Sendable, Equatable, Hashable {
    public var header: SignalHeader
    public var body: SignalBody

    public init(header: SignalHeader, body: SignalBody) {
        self.header = header
        self.body = body
    }

    /// `header.type`, which follows from the body.
    public var type: SignalType { body.type }

    /// Decodes the `data` of a 302 envelope. Strict: every required field of the header and of
    /// the body its `type` names must be there with its JSON type; errors name the field path
    /// (`data.header.sessionid`, `data.msg.sdp`).
    public static func decode(envelopeData: JSONValue) throws(WireError) -> SignalMessage {
        let data = try JSONObjectReader(envelopeData, path: "data")
        let (type, header) = try SignalHeader.decode(try data.object("header"))
        let msg = try data.object("msg")
        let body: SignalBody = switch type {
        case .offer: .offer(try SignalOffer.decode(msg))
        case .answer: .answer(try SignalAnswer.decode(msg))
        case .candidate: .candidate(try ICECandidate.decode(msg))
        case .disconnect: .disconnect(try SignalDisconnect.decode(msg))
        case .resolution: .resolution(try SignalResolution.decode(msg))
        }
        return SignalMessage(header: header, body: body)
    }

    /// The `data` of a 302 envelope.
    public var envelopeData: JSONValue {
        .object(["header": header.json(type: type), "msg": body.json])
    }

    /// Wraps this message in a 302 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .webrtcSignalling, pv: pv, t: t, data: envelopeData)
    }
}
