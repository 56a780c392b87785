/// `type` of a 308 body that carries a doorbell call (PROTOCOL.md 8.2); §3 calls say `rtc`.
public let videoDoorbellBodyType = "video_doorbell"

/// The `event`s of a `video_doorbell` message (PROTOCOL.md 8.2).
public enum DoorbellEvent: String, Sendable, CaseIterable, Hashable {
    /// App -> device: this user answers.
    case accept
    /// Both ways. App -> device: decline (before an accept) or hang up (after, from the user who
    /// accepted). Device -> out topic: the device or the operator ended the call (`reason`).
    case stop
    /// App -> device every `heartbeatInterval` once accepted; device -> out topic, one reply each.
    case heartbeat
    /// Device -> out topic: the user named by `uid` accepted; the others show "answered by other".
    case answered
    /// Device -> out topic: no accept within `doorbell.ringTimeout`, or every user declined.
    case timeout
    /// Device -> out topic: the operator cancelled before an accept.
    case cancel

    /// Events only an app sends (the device never does).
    public var isFromApp: Bool {
        switch self {
        case .accept, .stop, .heartbeat: true
        case .answered, .timeout, .cancel: false
        }
    }
}

/// One doorbell call message (PROTOCOL.md 8.2): the `data.data` of
/// `{"protocol":308,"data":{"type":"video_doorbell","data":{"devId":...,"uid":...,"event":...,"eData":...}}}`.
public struct VideoDoorbellMessage: Sendable, Equatable, Hashable {
    public var devId: String
    /// The app user concerned: the sender (app -> device) or the user a reply is about
    /// (device -> out topic); absent on `timeout` and `cancel`, which concern everyone.
    public var uid: String?
    public var event: DoorbellEvent
    /// The call id (the 43's `edata`).
    public var eData: String
    /// Why the call ended (`stop`, `cancel`): PROTOCOL.md 3.4's vocabulary, plus `answered_by_other`.
    public var reason: String?

    public init(devId: String, uid: String? = nil, event: DoorbellEvent, eData: String, reason: String? = nil) {
        self.devId = devId
        self.uid = uid
        self.event = event
        self.eData = eData
        self.reason = reason
    }

    /// The call id (`eData`).
    public var callId: String { eData }

    /// Decodes the `data` of a 308 envelope whose `type` is `video_doorbell`. Strict: `devId`,
    /// `event` and `eData` must be strings, `event` one of `DoorbellEvent`; `uid` and `reason`,
    /// when present, strings.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> VideoDoorbellMessage {
        let body = try JSONObjectReader(envelopeData, path: "data")
        let type = try body.string("type")
        guard type == videoDoorbellBodyType else {
            throw .invalidValue(field: "data.type", value: "'\(type)'", expected: "'\(videoDoorbellBodyType)'")
        }
        let d = try body.object("data")
        let name = try d.string("event")
        guard let event = DoorbellEvent(rawValue: name) else {
            throw .invalidValue(field: d.fieldPath("event"), value: "'\(name)'",
                                expected: DoorbellEvent.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return VideoDoorbellMessage(devId: try d.string("devId"), uid: try d.optionalString("uid"), event: event,
                                    eData: try d.string("eData"), reason: try d.optionalString("reason"))
    }

    /// The `data` of a 308 envelope.
    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = [
            "devId": .string(devId), "event": .string(event.rawValue), "eData": .string(eData),
        ]
        if let uid { o["uid"] = .string(uid) }
        if let reason { o["reason"] = .string(reason) }
        return .object(["type": .string(videoDoorbellBodyType), "data": .object(o)])
    }

    /// A 308 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .callSignalling, pv: pv, t: t, data: envelopeData)
    }
}
