import IPCWire

/// Which side of the protocol an engine plays.
public enum CallRole: String, Sendable, Hashable {
    case device
    case app
}

/// Who placed the call, seen from this engine: `incoming` = the peer called us.
public enum CallDirection: String, Sendable, Hashable {
    case incoming
    case outgoing
}

/// Which side ended a session.
public enum CallParty: String, Sendable, Hashable {
    /// This engine (its operator, a timer, a shutdown).
    case local
    /// The peer (a message).
    case remote
}

/// How a session ended.
public enum CallOutcome: String, Sendable, Hashable {
    /// Answered, then hung up (see `endedBy`).
    case hungUp
    /// The caller cancelled before an answer.
    case cancelled
    case rejected
    case busy
    /// The deadline passed with no answer (`not_answered` or `timeout`).
    case notAnswered
    /// App role: another user answered (`already_answered`).
    case answeredElsewhere
    /// App role: another user rejected a one-to-more call (`already_rejected`).
    case rejectedElsewhere
    /// A `stop` was sent or received (see `reason`).
    case stopped
}

/// One ended session, as the journal and the SDK delegate see it.
public struct CallRecord: Sendable, Equatable {
    public var sessionId: String
    public var role: CallRole
    public var direction: CallDirection
    /// This engine's id (devId or app user id).
    public var localId: String
    /// Every peer of the session: the caller (incoming) or every target called (outgoing).
    public var peers: [String]
    /// Who answered (this engine's own id when it answered an incoming call), or nil.
    public var answeredBy: String?
    public var callType: CallType
    public var startedAt: Int64
    public var answeredAt: Int64?
    public var endedAt: Int64
    public var outcome: CallOutcome
    public var endedBy: CallParty
    /// The reason in PROTOCOL.md 3.4's vocabulary (sent or received), when there is one.
    public var reason: StopReason?
    /// The `reason` string exactly as the peer sent it, when the peer ended the session.
    public var remoteReason: String?
    /// App role: the SDK error code this ending reports (PROTOCOL.md 3.5); nil for an ending of the
    /// app's own doing (and always nil in the device role).
    public var sdkError: SDKError?

    public init(sessionId: String, role: CallRole, direction: CallDirection, localId: String, peers: [String],
                answeredBy: String?, callType: CallType, startedAt: Int64, answeredAt: Int64?, endedAt: Int64,
                outcome: CallOutcome, endedBy: CallParty, reason: StopReason?, remoteReason: String?,
                sdkError: SDKError?) {
        self.sessionId = sessionId
        self.role = role
        self.direction = direction
        self.localId = localId
        self.peers = peers
        self.answeredBy = answeredBy
        self.callType = callType
        self.startedAt = startedAt
        self.answeredAt = answeredAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.endedBy = endedBy
        self.reason = reason
        self.remoteReason = remoteReason
        self.sdkError = sdkError
    }
}
