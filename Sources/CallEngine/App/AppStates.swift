import IPCWire

/// The app role's states: one call at a time (SDK error -2520 otherwise). `.ringingOutgoing`: the
/// app called a device (`startCall`), no answer yet; `.ringingIncoming`: a device called this app
/// (listen mode); `.answered`: either direction.
typealias AppState = SessionState<AppOutgoingCall>

/// The app's own call to a device.
struct AppOutgoingCall: OutgoingSession {
    let info: SessionInfo
    /// The device sent `ring`.
    var peerRang = false
    var device: String { info.peers[0] }
}

extension SessionState where Outgoing == AppOutgoingCall {
    /// The one peer of the current session (the device).
    var peer: String? {
        switch self {
        case .idle, .shutDown: nil
        case .ringingOutgoing(let call): call.device
        case .ringingIncoming(let ring): ring.caller
        case .answered(let call): call.peer
        }
    }
}
