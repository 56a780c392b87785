import IPCWire

/// The app's side of the rules it shares with the device role (`CallRoleRules`).
extension AppCallEngine: CallRoleRules {
    var localId: String { userId }

    var incomingRules: IncomingCallConfig {
        // 3.2.2 (listen mode): ringing back is optional; the deadline timer waits a grace for the
        // device's not_answered; answering an unknown session is optional (3.4, mirrored).
        IncomingCallConfig(supportedChannelTypes: config.supportedChannelTypes, policy: config.incomingPolicy,
                           ringsBack: config.ringsOnIncomingCall, deadlineGraceMs: config.deadlineGraceMs,
                           actsBusy: false, answersUnknownSessions: config.answersUnknownSessions)
    }

    /// The device its own call rings.
    var ringingTargets: [String] {
        guard case .ringingOutgoing(let call) = state else { return [] }
        return [call.device]
    }

    /// The app only records the link's state; the device enforces the link timers (PROTOCOL.md
    /// 3.3) and tells the app with `stop`.
    var mediaLostGraceMs: Int64? { nil }
}
