import CallEngine
import IPCWire

/// One line of the call journal (JSON Lines, docs/control.md): a call event the device received or
/// sent (`kind` event), or an ended call (`kind` call). The control API serves the same entries as
/// openapi.yaml's `JournalEntry`.
public struct JournalEntry: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Encodable {
        case event
        case call
        /// PROTOCOL.md 8.4: the device woke (`latencyMs` from the wake request).
        case wake
        /// PROTOCOL.md 8.5: a left message was written (`path`, `durationSeconds`).
        case message
    }

    /// unix ms
    public var t: Int64
    /// ISO 8601, UTC, with milliseconds.
    public var time: String
    public var device: String
    public var kind: Kind
    public var session: String
    /// event: `in` or `out`; call: `incoming` or `outgoing`.
    public var direction: String
    /// The event's `reason` (event), or why the call ended (call).
    public var reason: String?
    public var callType: Int?
    // kind event
    public var event: String?
    /// Who sent the event (in) or whom it went to (out).
    public var peer: String?
    // kind call
    public var outcome: String?
    public var endedBy: String?
    public var peers: [String]?
    public var answeredBy: String?
    public var startedAt: Int64?
    public var answeredAt: Int64?
    public var endedAt: Int64?
    /// PROTOCOL.md 8: the device's doorbell kind (`ac_doorbell`, `doorbell`) on a doorbell call's
    /// events and its ending; nil for a §3 call of a `screen_ipc` device.
    public var doorbellKind: String?
    // kind wake
    public var latencyMs: Int64?
    // kind message
    public var path: String?
    public var durationSeconds: Int?

    /// A call event in or out.
    init(device: String, direction: JournalDirection, message m: CallMessage, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        kind = .event
        session = m.sessionId
        self.direction = direction.rawValue
        reason = m.reason
        callType = m.callType.map { Int($0.rawValue) }
        event = m.event.rawValue
        peer = direction == .in ? m.curId : m.targetId
    }

    /// An ended call.
    init(device: String, ended r: CallRecord, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        kind = .call
        session = r.sessionId
        direction = r.direction.rawValue
        reason = r.reason?.rawValue
        callType = Int(r.callType.rawValue)
        outcome = r.outcome.rawValue
        endedBy = r.endedBy.rawValue
        peers = r.peers
        answeredBy = r.answeredBy
        startedAt = r.startedAt
        answeredAt = r.answeredAt
        endedAt = r.endedAt
    }

    private enum CodingKeys: String, CodingKey {
        case t, time, device, kind, session, direction, reason, callType, event, peer
        case outcome, endedBy, peers, answeredBy, startedAt, answeredAt, endedAt
        case doorbellKind, latencyMs, path, durationSeconds
    }

    /// The file keeps the fields of an entry's kind that have no value as `null` (`reason`, and an
    /// ended call's `answeredBy`/`answeredAt`); the other kind's fields are left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(t, forKey: .t)
        try c.encode(time, forKey: .time)
        try c.encode(device, forKey: .device)
        try c.encode(kind, forKey: .kind)
        try c.encode(session, forKey: .session)
        try c.encode(direction, forKey: .direction)
        try c.encode(reason, forKey: .reason)
        try c.encodeIfPresent(callType, forKey: .callType)
        switch kind {
        case .event:
            try c.encodeIfPresent(event, forKey: .event)
            try c.encodeIfPresent(peer, forKey: .peer)
        case .call:
            try c.encodeIfPresent(outcome, forKey: .outcome)
            try c.encodeIfPresent(endedBy, forKey: .endedBy)
            try c.encodeIfPresent(peers, forKey: .peers)
            try c.encode(answeredBy, forKey: .answeredBy)
            try c.encodeIfPresent(startedAt, forKey: .startedAt)
            try c.encode(answeredAt, forKey: .answeredAt)
            try c.encodeIfPresent(endedAt, forKey: .endedAt)
        case .wake:
            try c.encodeIfPresent(latencyMs, forKey: .latencyMs)
        case .message:
            try c.encodeIfPresent(path, forKey: .path)
            try c.encodeIfPresent(durationSeconds, forKey: .durationSeconds)
        }
        try c.encodeIfPresent(doorbellKind, forKey: .doorbellKind)
    }
}
