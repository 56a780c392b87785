import IPCWire

extension AppDoorbellEngine {
    /// A timer the engine armed is due; a stale one changes nothing.
    public mutating func timerFired(_ timer: CallTimer, now: Int64) -> [CallEffect] {
        guard timers.take(timer), state.call?.callId == timer.sessionId else { return [] }
        switch (timer.kind, state) {
        case (.ringTimeout, .ringing):
            // The device's `timeout` never came: stop ringing, -2530, nothing to send.
            return end(Ending(.notAnswered, by: .local, reason: .timeout, sdkError: .timeout), now: now)

        case (.ringTimeout, .accepting(let ring)):
            // Our accept was never answered: tell the device we are gone, -2530.
            var effects: [CallEffect] = [outgoing(.stop, devId: ring.devId, callId: ring.callId, reason: .timeout)]
            effects += end(Ending(.notAnswered, by: .local, reason: .timeout, sdkError: .timeout), now: now)
            return effects

        case (.autoAnswer, .ringing(let ring)):
            return accept(ring, now: now)

        case (.autoReject, .ringing(let ring)):
            return decline(ring, reason: nil, now: now)

        case (.heartbeatSend, .answered(let call)):
            // 8.2: heartbeat "from the user who accepted, every heartbeatInterval".
            return [outgoing(.heartbeat, devId: call.peer, callId: call.callId),
                    timers.arm(CallTimer(.heartbeatSend, sessionId: call.callId),
                               at: now.addingSaturating(config.heartbeatIntervalMs))]

        case (.heartbeatWatchdog, .answered(let call)):
            // 3.3: "An app that gets no answer for heartbeatTimeout ends the call with SDK error
            // -2532" (telling the device with stop heartbeat_timeout).
            var effects: [CallEffect] = [outgoing(.stop, devId: call.peer, callId: call.callId, reason: .heartbeatTimeout)]
            effects += end(Ending(.stopped, by: .local, reason: .heartbeatTimeout, sdkError: .disconnect), now: now)
            return effects

        case (.ringTimeout, _), (.autoAnswer, _), (.autoReject, _), (.heartbeatSend, _), (.heartbeatWatchdog, _),
             (.callDeadline, _), (.connectTimeout, _), (.mediaLost, _), (.messageWindow, _),
             (.sleepAfter, _), (.wakeLatency, _), (.batteryDrain, _):
            return []
        }
    }
}
