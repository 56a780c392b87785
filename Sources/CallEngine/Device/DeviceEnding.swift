import IPCWire

extension DeviceCallEngine {
    /// The answered phase (PROTOCOL.md 3.1.6, 3.2.6, 3.3): `connectTimeout` and the heartbeat
    /// watchdog start (`beginAnswered`, Shared/IncomingCallRules.swift).
    func answeredTimers(sessionId s: String, now: Int64) -> [(CallTimer, at: Int64)] {
        [(CallTimer(.connectTimeout, sessionId: s), now.addingSaturating(config.connectTimeoutMs)),
         (CallTimer(.heartbeatWatchdog, sessionId: s), now.addingSaturating(config.heartbeatTimeoutMs))]
    }

    /// The answered call ends with `stop` `reason` sent to the peer (PROTOCOL.md 3.3).
    mutating func stopAnswered(_ call: ActiveCall, reason: StopReason, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [
            .send(.outgoing(.stop, from: devId, to: call.peer, session: call.info.sessionId, reason: reason)),
        ]
        effects += end(Ending(.stopped, by: .local, reason: reason), now: now)
        return effects
    }
}
