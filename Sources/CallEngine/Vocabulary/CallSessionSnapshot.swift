import IPCWire

/// Where an engine is (both roles).
public enum CallPhase: String, Sendable, Hashable {
    /// No session.
    case idle
    /// A peer called us; we ring.
    case ringingIncoming
    /// We called; the peer(s) have not answered yet.
    case ringingOutgoing
    /// Answered, in either direction.
    case answered
    /// After `CallInput.shutdown`: everything is refused.
    case shutDown
}

/// The media link of an answered call, as the engine knows it (PROTOCOL.md 3.3).
public enum MediaLinkState: Sendable, Equatable, Hashable {
    /// Answered; the link has not come up yet (`connectTimeout` runs).
    case awaitingConnect
    case up
    /// Lost at this time (the grace runs).
    case lost(since: Int64)
}

/// A read-only view of the current session.
public struct CallSessionSnapshot: Sendable, Equatable {
    public var sessionId: String
    public var direction: CallDirection
    /// `.ringingIncoming`, `.ringingOutgoing` or `.answered`.
    public var phase: CallPhase
    public var callType: CallType
    /// Every peer: the caller, or every target called.
    public var peers: [String]
    /// Outgoing and ringing: the targets still in the call; otherwise the one peer (or empty).
    public var activePeers: [String]
    /// Outgoing and ringing: the targets that sent `ring`.
    public var peersRinging: [String]
    /// Who answered, once answered (this engine's own id when it answered).
    public var answeredBy: String?
    /// The call's absolute deadline (unix ms).
    public var deadline: Int64
    public var startedAt: Int64
    public var answeredAt: Int64?
    /// nil until answered.
    public var mediaLink: MediaLinkState?
    public var extra: CallExtra
}

/// The answered call, for the P2P authorisation rule (PROTOCOL.md 4): an offer for `sessionId`
/// from `peer` may open the link.
public struct AnsweredCall: Sendable, Equatable, Hashable {
    public var sessionId: String
    /// The app user on the other end (device role), or the device (app role).
    public var peer: String
}
