import IPCWire

/// The device's side of the rules it shares with the app role (`CallRoleRules`).
extension DeviceCallEngine: CallRoleRules {
    var localId: String { devId }

    var incomingRules: IncomingCallConfig {
        // 3.1.3: the device always rings back at once; 3.1.5: its deadline timer is the deadline
        // itself (it sends not_answered); 3.4: it always answers an unknown session.
        IncomingCallConfig(supportedChannelTypes: config.supportedChannelTypes, policy: config.answerPolicy,
                           ringsBack: true, deadlineGraceMs: 0, actsBusy: isActingBusy,
                           answersUnknownSessions: true)
    }

    var sessionInfo: SessionInfo? { state.info }

    var ringingIncoming: IncomingRing? {
        guard case .ringingIncoming(let ring) = state else { return nil }
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

    mutating func enterRinging(_ ring: IncomingRing) { state = .ringingIncoming(ring) }

    mutating func endSession(_ ending: Ending, now: Int64) -> [CallEffect] { end(ending, now: now) }
}
