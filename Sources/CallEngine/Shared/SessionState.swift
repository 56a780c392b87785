import IPCWire

/// The states of a §3 role (`DeviceState`, `AppState`): exactly one session at a time (PROTOCOL.md
/// 3.1.2). `Outgoing` is the role's own call while it rings: the device's at its targets
/// (`OutgoingRing`), the app's at a device (`AppOutgoingCall`).
enum SessionState<Outgoing: OutgoingSession>: Sendable {
    case idle
    /// A call came in; it rings here (PROTOCOL.md 3.1; the app's listen mode, 3.2.2).
    case ringingIncoming(IncomingRing)
    /// This role called; no answer yet (PROTOCOL.md 3.2; the app's `startCall`).
    case ringingOutgoing(Outgoing)
    /// Answered, either direction (PROTOCOL.md 3.3).
    case answered(ActiveCall)
    case shutDown
}

/// A role's own call while it rings.
protocol OutgoingSession: Sendable {
    var info: SessionInfo { get }
}

extension SessionState: SessionRoleState {
    var phase: CallPhase {
        switch self {
        case .idle: .idle
        case .ringingIncoming: .ringingIncoming
        case .ringingOutgoing: .ringingOutgoing
        case .answered: .answered
        case .shutDown: .shutDown
        }
    }

    /// The session, if any.
    var info: SessionInfo? {
        switch self {
        case .idle, .shutDown: nil
        case .ringingIncoming(let ring): ring.info
        case .ringingOutgoing(let call): call.info
        case .answered(let call): call.info
        }
    }

    var ringingIncomingCall: IncomingRing? {
        guard case .ringingIncoming(let ring) = self else { return nil }
        return ring
    }

    var answeredCall: ActiveCall? {
        guard case .answered(let call) = self else { return nil }
        return call
    }
}
