import IPCWire

/// The app role's states: one call at a time (SDK error -2520 otherwise).
enum AppState: Sendable {
    case idle
    /// The app called a device (`startCall`); no answer yet.
    case calling(AppOutgoingCall)
    /// A device called this app (listen mode); it rings.
    case ringing(IncomingRing)
    /// Answered, either direction.
    case answered(ActiveCall)
    case shutDown
}

/// The app's own call to a device.
struct AppOutgoingCall: Sendable {
    let info: SessionInfo
    /// The device sent `ring`.
    var peerRang = false
    var device: String { info.peers[0] }
}

extension AppState {
    var phase: CallPhase {
        switch self {
        case .idle: .idle
        case .calling: .ringingOutgoing
        case .ringing: .ringingIncoming
        case .answered: .answered
        case .shutDown: .shutDown
        }
    }

    var info: SessionInfo? {
        switch self {
        case .idle, .shutDown: nil
        case .calling(let call): call.info
        case .ringing(let ring): ring.info
        case .answered(let call): call.info
        }
    }

    /// The one peer of the current session (the device).
    var peer: String? {
        switch self {
        case .idle, .shutDown: nil
        case .calling(let call): call.device
        case .ringing(let ring): ring.caller
        case .answered(let call): call.peer
        }
    }
}
