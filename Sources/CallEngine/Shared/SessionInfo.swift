import IPCWire

/// What every session knows from its start to its end, whatever its phase.
struct SessionInfo: Sendable {
    let sessionId: String
    let direction: CallDirection
    let callType: CallType
    /// Absolute deadline, unix ms.
    let deadline: Int64
    let startedAt: Int64
    /// The caller (incoming) or every target called (outgoing), in call order.
    let peers: [String]
    let extra: CallExtra
}

/// An answered call, in either direction.
struct ActiveCall: Sendable {
    let info: SessionInfo
    /// The one peer left in the call.
    let peer: String
    /// Who answered: the local id (we answered an incoming call) or the peer.
    let answeredBy: String
    let answeredAt: Int64
    var media: MediaLinkState
}

/// How a session is about to end; the role's `end` turns it into a `CallRecord`.
struct Ending: Sendable {
    var outcome: CallOutcome
    var endedBy: CallParty
    var reason: StopReason?
    var remoteReason: String?
    var sdkError: SDKError?
    /// Another user who answered, when that is why the call ends here (a doorbell call another
    /// household user accepted, PROTOCOL.md 8.2).
    var answeredBy: String?

    init(_ outcome: CallOutcome, by endedBy: CallParty, reason: StopReason? = nil,
         remoteReason: String? = nil, sdkError: SDKError? = nil, answeredBy: String? = nil) {
        self.outcome = outcome
        self.endedBy = endedBy
        self.reason = reason
        self.remoteReason = remoteReason
        self.sdkError = sdkError
        self.answeredBy = answeredBy
    }

    /// The peer ended the session with `message` (a `stop` carries its reason).
    static func remote(_ outcome: CallOutcome, message: CallMessage, sdkError: SDKError? = nil) -> Ending {
        Ending(outcome, by: .remote, reason: message.reason.flatMap(StopReason.init(rawValue:)),
               remoteReason: message.reason, sdkError: sdkError)
    }
}

extension CallMessage {
    /// A message this engine sends: `curId` is always the local id.
    static func outgoing(_ event: CallEvent, from localId: String, to peer: String, session sessionId: String,
                         reason: StopReason? = nil) -> CallMessage {
        CallMessage(event: event, curId: localId, targetId: peer, sessionId: sessionId, reason: reason?.rawValue)
    }

    /// A reply to this message from `localId`, in its session, to its sender.
    func reply(_ event: CallEvent, from localId: String, reason: StopReason? = nil) -> CallMessage {
        .outgoing(event, from: localId, to: curId, session: sessionId, reason: reason)
    }
}

extension SessionInfo {
    func snapshot(phase: CallPhase, activePeers: [String], peersRinging: [String] = [],
                  answeredBy: String? = nil, answeredAt: Int64? = nil, media: MediaLinkState? = nil) -> CallSessionSnapshot {
        CallSessionSnapshot(sessionId: sessionId, direction: direction, phase: phase, callType: callType,
                            peers: peers, activePeers: activePeers, peersRinging: peersRinging,
                            answeredBy: answeredBy, deadline: deadline, startedAt: startedAt,
                            answeredAt: answeredAt, mediaLink: media, extra: extra)
    }
}

extension ActiveCall {
    var snapshot: CallSessionSnapshot {
        info.snapshot(phase: .answered, activePeers: [peer], answeredBy: answeredBy,
                      answeredAt: answeredAt, media: media)
    }
}
