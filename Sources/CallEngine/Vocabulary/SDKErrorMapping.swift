import IPCWire

extension SDKError {
    /// PROTOCOL.md 3.5: the error an app reports when the peer ends its call with `event` (and, for
    /// `stop`, `reason`). nil for events that do not end a call.
    public static func forPeerEnding(_ event: CallEvent, reason: String?) -> SDKError? {
        switch event {
        case .reject: .rejected
        case .busy: .peerBusy
        case .notAnswered: .notAnswered
        case .hangUp: .peerHungUp
        case .cancel: .cancelled
        case .alreadyAnswered: .answeredByOthers
        case .alreadyRejected: .rejectedByOthers
        case .stop: forStop(reason: reason)
        case .timeout: .timeout
        case .call, .ring, .answer, .heartbeat: nil
        }
    }

    /// PROTOCOL.md 3.5: the error a received `stop` maps to, by its reason.
    public static func forStop(reason: String?) -> SDKError {
        switch reason.flatMap(StopReason.init(rawValue:)) {
        case .invalidParams?: .invalidParams
        case .undefinedSession?: .undefinedSession
        case .heartbeatTimeout?, .disconnected?: .disconnect
        case .connectFailed?: .connectFailed
        case .answeredByOther?: .answeredByOthers
        case .expired?, .timeout?: .timeout
        case .busy?, .shutdown?, .rejected?, nil: .remoteStop
        }
    }
}
