import IPCWire

extension AppCallEngine {
    /// A timer the engine armed is due; a stale one changes nothing.
    public mutating func timerFired(_ timer: CallTimer, now: Int64) -> [CallEffect] {
        guard timers.take(timer), state.info?.sessionId == timer.sessionId else { return [] }
        switch (timer.kind, state) {
        case (.callDeadline, .ringingOutgoing(let call)):
            // The caller gives up at its deadline (plus grace, for the device's not_answered):
            // app -> device `timeout` (PROTOCOL.md 3.1.4), SDK error -2530.
            var effects: [CallEffect] = [
                .send(.outgoing(.timeout, from: userId, to: call.device, session: call.info.sessionId)),
            ]
            effects += end(Ending(.notAnswered, by: .local, reason: .timeout, sdkError: .timeout), now: now)
            return effects

        case (.callDeadline, .ringingIncoming):
            // The device's not_answered never came: stop ringing, -2530, nothing to send.
            return end(Ending(.notAnswered, by: .local, reason: .timeout, sdkError: .timeout), now: now)

        case (.autoAnswer, .ringingIncoming(let ring)):
            return answerIncoming(ring, now: now)

        case (.autoReject, .ringingIncoming(let ring)):
            return refuseIncoming(ring, with: .reject, now: now)

        case (.heartbeatSend, .answered(let call)):
            // PROTOCOL.md 3.3: every heartbeatInterval the app sends heartbeat.
            let s = call.info.sessionId
            return [.send(.outgoing(.heartbeat, from: userId, to: call.peer, session: s)),
                    timers.arm(CallTimer(.heartbeatSend, sessionId: s), at: now.addingSaturating(config.heartbeatIntervalMs))]

        case (.heartbeatWatchdog, .answered(let call)):
            // PROTOCOL.md 3.3: "An app that gets no answer for heartbeatTimeout ends the call with
            // SDK error -2532" (telling the device with stop heartbeat_timeout).
            var effects: [CallEffect] = [
                .send(.outgoing(.stop, from: userId, to: call.peer, session: call.info.sessionId,
                                reason: .heartbeatTimeout)),
            ]
            effects += end(Ending(.stopped, by: .local, reason: .heartbeatTimeout, sdkError: .disconnect), now: now)
            return effects

        case (.callDeadline, _), (.autoAnswer, _), (.autoReject, _), (.heartbeatSend, _), (.heartbeatWatchdog, _),
             (.connectTimeout, _), (.mediaLost, _),
             // The doorbell and power timers of PROTOCOL.md 8 are never armed by this role.
             (.ringTimeout, _), (.messageWindow, _), (.sleepAfter, _), (.wakeLatency, _), (.batteryDrain, _):
            return []
        }
    }
}
