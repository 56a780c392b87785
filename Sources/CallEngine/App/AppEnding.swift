import IPCWire

extension AppCallEngine {
    /// PROTOCOL.md 3.3: once answered (either direction) the app sends a heartbeat every
    /// `heartbeatInterval` and watches for replies (`beginAnswered`, Shared/IncomingCallRules.swift).
    func answeredTimers(sessionId s: String, now: Int64) -> [(CallTimer, at: Int64)] {
        [(CallTimer(.heartbeatSend, sessionId: s), now.addingSaturating(config.heartbeatIntervalMs)),
         (CallTimer(.heartbeatWatchdog, sessionId: s), now.addingSaturating(config.heartbeatTimeoutMs))]
    }

    /// The app cancels its own call before an answer (no SDK error).
    mutating func cancelOutgoing(_ call: AppOutgoingCall, reason: StopReason?, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [
            .send(.outgoing(.cancel, from: userId, to: call.device, session: call.info.sessionId, reason: reason)),
        ]
        effects += end(Ending(.cancelled, by: .local, reason: reason), now: now)
        return effects
    }
}
