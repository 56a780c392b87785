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

    var sessionInfo: SessionInfo? { state.info }

    var ringingIncoming: IncomingRing? {
        guard case .ringing(let ring) = state else { return nil }
        return ring
    }

    var answeredSession: ActiveCall? {
        guard case .answered(let call) = state else { return nil }
        return call
    }

    var isShutDown: Bool {
        guard case .shutDown = state else { return false }
        return true
    }

    mutating func enterRinging(_ ring: IncomingRing) { state = .ringing(ring) }

    mutating func endSession(_ ending: Ending, now: Int64) -> [CallEffect] { end(ending, now: now) }
}
