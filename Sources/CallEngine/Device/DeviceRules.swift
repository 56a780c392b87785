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

    /// The targets its own call still rings (PROTOCOL.md 3.2).
    var ringingTargets: [String] {
        guard case .ringingOutgoing(let ring) = state else { return [] }
        return ring.remaining
    }

    /// PROTOCOL.md 3.3: "P2P link lost and not back within 5 s: stop with reason disconnected".
    var mediaLostGraceMs: Int64? { config.mediaLostGraceMs }
}
