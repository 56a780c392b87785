import IPCWire

/// The doorbell call machine's states (PROTOCOL.md 8.1, 8.2, 8.5). One call at a time.
enum DoorbellState: Sendable {
    /// No call, no message window.
    case idle
    /// A press announced call `callId` (the 43); no household user has accepted yet (8.2).
    case ringing(DoorbellRing)
    /// A household user accepted; the call is theirs (8.2, §3.3's link and heartbeat rules).
    case connected(DoorbellCall)
    /// 8.5: the ring of `callId` timed out and messages are on: a press now leaves a message.
    /// No call is on (the phase is `.idle`).
    case messageWindow(DoorbellMessageWindow)
    case shutDown
}

/// A call ringing at every app of the household.
struct DoorbellRing: Sendable {
    let callId: String
    let startedAt: Int64
    /// When `ringTimeout` fires (unix ms).
    let deadline: Int64
    /// 8.2 **[ours]**: household users who sent `stop` before any accept, in order.
    var declined: [String] = []
}

/// 8.5: the message window after a ring timeout.
struct DoorbellMessageWindow: Sendable {
    /// The missed call the window follows.
    let callId: String
    let closesAt: Int64
}

extension DoorbellState: CallRoleState {
    var phase: CallPhase {
        switch self {
        case .idle, .messageWindow: .idle
        case .ringing: .ringingOutgoing
        case .connected: .answered
        case .shutDown: .shutDown
        }
    }

    /// The current call's id (ringing or connected), or nil.
    var callId: String? {
        switch self {
        case .idle, .messageWindow, .shutDown: nil
        case .ringing(let ring): ring.callId
        case .connected(let call): call.callId
        }
    }
}
