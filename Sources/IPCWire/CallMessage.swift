/// The 13 call events of PROTOCOL.md 3, with the SDK's numeric `callEvent` values.
public enum CallEvent: String, Sendable, CaseIterable, Hashable {
    case call
    case cancel
    case hangUp = "hang_up"
    case ring
    case answer
    case reject
    case notAnswered = "not_answered"
    case busy
    case alreadyAnswered = "already_answered"
    case alreadyRejected = "already_rejected"
    case heartbeat
    case stop
    case timeout

    /// The SDK's `callEvent` enum value (PROTOCOL.md 3).
    public var number: Int {
        switch self {
        case .call: 1
        case .cancel: 2
        case .hangUp: 3
        case .ring: 4
        case .answer: 5
        case .reject: 6
        case .notAnswered: 7
        case .busy: 8
        case .alreadyAnswered: 9
        case .alreadyRejected: 10
        case .heartbeat: 11
        case .stop: 12
        case .timeout: 13
        }
    }

    public init?(number: Int) {
        guard let match = Self.allCases.first(where: { $0.number == number }) else { return nil }
        self = match
    }
}

/// `callType` (PROTOCOL.md 3): who may answer and what one reject does.
public enum CallType: Int, Sendable, CaseIterable, Hashable {
    /// Exactly one target.
    case oneToOne = 1
    /// One-to-more: the first answer wins, one reject stops the call.
    case oneToMore = 2
    /// One-to-more special: the first answer wins, a reject removes only that target.
    case oneToMoreSpecial = 3
}

/// `extra.channelType` (PROTOCOL.md 3).
public enum ChannelType: Int, Sendable, CaseIterable, Hashable {
    case audio = 0
    case video = 1
    case audioVideo = 2
}

/// The business type every call carries in `extra.bizType`.
public let screenIPCBizType = "screen_ipc"

/// `extra` of a call (PROTOCOL.md 3). Its fields are kept as received so the call engine can
/// refuse a bad one with `invalid_params` (PROTOCOL.md 3.4) instead of the decoder dropping it.
public struct CallExtra: Sendable, Equatable, Hashable {
    /// `bizType`; nil when absent or not a string.
    public var bizType: String?
    /// `channelType`; nil when absent or not an integer.
    public var channelType: Int?
    public var category: String?
    /// `keepConnect`, default false.
    public var keepConnect: Bool
    /// What is wrong with it as received (a field path and why), or nil.
    public var problem: String?

    public init(bizType: String? = screenIPCBizType, channelType: Int? = ChannelType.audioVideo.rawValue,
                category: String? = nil, keepConnect: Bool = false, problem: String? = nil) {
        self.bizType = bizType
        self.channelType = channelType
        self.category = category
        self.keepConnect = keepConnect
        self.problem = problem
    }

    /// Reads `extra` leniently: every oddity is recorded in `problem`, nothing throws.
    init(lenient value: JSONValue, path: String) {
        guard case .object(let o) = value else {
            self.init(bizType: nil, channelType: nil, problem: "'\(path)' must be an object")
            return
        }
        var problem: String?
        var biz: String?
        switch o["bizType"] {
        case .string(let s)?: biz = s
        case nil, .null?: problem = "missing '\(path).bizType'"
        default: problem = "'\(path).bizType' must be a string"
        }
        var channel: Int?
        switch o["channelType"] {
        case .int(let i)?: channel = Int(clamping: i)
        case .double(let x)? where x == x.rounded(): channel = Int(clamping: JSONObjectReader.saturating(x))
        case nil, .null?: channel = nil
        default: problem = problem ?? "'\(path).channelType' must be an integer"
        }
        var category: String?
        if case .string(let s)? = o["category"] { category = s }
        var keep = false
        switch o["keepConnect"] {
        case .bool(let b)?: keep = b
        case nil, .null?: break
        default: problem = problem ?? "'\(path).keepConnect' must be a boolean"
        }
        self.init(bizType: biz, channelType: channel, category: category, keepConnect: keep, problem: problem)
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["keepConnect": .bool(keepConnect)]
        if let bizType { o["bizType"] = .string(bizType) }
        if let channelType { o["channelType"] = .int(Int64(channelType)) }
        if let category { o["category"] = .string(category) }
        return .object(o)
    }
}

/// One 308 call-signalling event (PROTOCOL.md 3): the `data.data` of
/// `{"protocol":308,"data":{"type":"rtc","data":{...}}}`.
public struct CallMessage: Sendable, Equatable, Hashable {
    public var event: CallEvent
    /// Who sends this event (an app user id, or the devId).
    public var curId: String
    /// Who it is for.
    public var targetId: String
    public var sessionId: String
    /// The call's absolute deadline, unix milliseconds. Required on `call`.
    public var timeout: Int64?
    /// Absent means one-to-one.
    public var callType: CallType?
    /// Required on `call`; kept as received (see `CallExtra`).
    public var extra: CallExtra?
    public var reason: String?
    public var appDeviceId: String?
    /// What is wrong with an optional field of a `call` as received (a field path and why), or nil.
    /// PROTOCOL.md 3.4: "a `callType` ... outside its listed values is `invalid_params`", so such a
    /// call is kept (with `callType` nil) for the engine to answer instead of being dropped.
    public var problem: String?

    public init(event: CallEvent, curId: String, targetId: String, sessionId: String,
                timeout: Int64? = nil, callType: CallType? = nil, extra: CallExtra? = nil,
                reason: String? = nil, appDeviceId: String? = nil, problem: String? = nil) {
        self.event = event
        self.curId = curId
        self.targetId = targetId
        self.sessionId = sessionId
        self.timeout = timeout
        self.callType = callType
        self.extra = extra
        self.reason = reason
        self.appDeviceId = appDeviceId
        self.problem = problem
    }

    /// `type` of the 308 body.
    public static let bodyType = "rtc"

    /// Decodes the `data` of a 308 envelope. Strict (PROTOCOL.md 3.4): a missing or mistyped
    /// `event`/`callEvent`, `curId`, `targetId`, `sessionId`, or (on `call`) `timeout`, or an unknown
    /// event, throws. A bad `extra` is kept with its `problem` so the engine can answer it.
    public static func decode(envelopeData: JSONValue) throws(WireError) -> CallMessage {
        let body = try JSONObjectReader(envelopeData, path: "data")
        let type = try body.string("type")
        guard type == bodyType else {
            throw .invalidValue(field: "data.type", value: "'\(type)'", expected: "'\(bodyType)'")
        }
        let d = try body.object("data")
        let event: CallEvent
        if d.has("event") {
            let name = try d.string("event")
            guard let e = CallEvent(rawValue: name) else { throw .unknownEvent(name) }
            event = e
        } else if d.has("callEvent") {
            let n = try d.int("callEvent")
            guard let e = CallEvent(number: Int(clamping: n)) else { throw .unknownEvent(String(n)) }
            event = e
        } else {
            throw .missingField(d.fieldPath("event"))
        }
        let curId = try d.string("curId")
        let targetId = try d.string("targetId")
        let sessionId = try d.string("sessionId")
        // PROTOCOL.md 3.4: numbers are range-checked before any arithmetic. An integral number
        // beyond Int64 saturates (a deadline far ahead or long past), so it is judged, not dropped.
        let timeout: Int64? = event == .call ? try d.saturatingInt("timeout") : try d.optionalSaturatingInt("timeout")
        var callType: CallType?
        var problem: String?
        do throws(WireError) {
            if let raw = try d.optionalSaturatingInt("callType") {
                guard let ct = CallType(rawValue: Int(clamping: raw)) else {
                    throw .invalidValue(field: d.fieldPath("callType"), value: String(raw), expected: "1, 2 or 3")
                }
                callType = ct
            }
        } catch {
            // On a `call` the engine answers it with invalid_params (3.4); elsewhere it is refused here.
            guard event == .call else { throw error }
            problem = error.description
        }
        var extra: CallExtra?
        if let raw = d.fields["extra"], raw != .null {
            extra = CallExtra(lenient: raw, path: d.fieldPath("extra"))
        }
        return CallMessage(
            event: event, curId: curId, targetId: targetId, sessionId: sessionId,
            timeout: timeout, callType: callType, extra: extra,
            reason: try d.optionalString("reason"), appDeviceId: try d.optionalString("appDeviceId"),
            problem: problem)
    }

    /// The `data` of a 308 envelope.
    public var envelopeData: JSONValue {
        var o: [String: JSONValue] = [
            "event": .string(event.rawValue),
            "curId": .string(curId),
            "targetId": .string(targetId),
            "sessionId": .string(sessionId),
        ]
        if let timeout { o["timeout"] = .int(timeout) }
        if let callType { o["callType"] = .int(Int64(callType.rawValue)) }
        if let extra { o["extra"] = extra.json }
        if let reason { o["reason"] = .string(reason) }
        if let appDeviceId { o["appDeviceId"] = .string(appDeviceId) }
        return .object(["type": .string(Self.bodyType), "data": .object(o)])
    }

    /// Wraps this event in a 308 envelope sent at `t` (unix seconds).
    public func envelope(t: Int64, pv: String? = "2.2") -> Envelope {
        Envelope(protocolNumber: .callSignalling, pv: pv, t: t, data: envelopeData)
    }
}

/// Reasons a device sends (PROTOCOL.md 3.4).
public enum StopReason: String, Sendable, CaseIterable, Hashable {
    case busy
    case timeout
    case invalidParams = "invalid_params"
    case expired
    case undefinedSession = "undefined_session"
    case heartbeatTimeout = "heartbeat_timeout"
    case connectFailed = "connect_failed"
    case disconnected
    case shutdown
    case rejected
    /// PROTOCOL.md 8.2: a second `accept` of a doorbell call another user has already accepted.
    case answeredByOther = "answered_by_other"
}
