import IPCWire

extension DeviceCallEngine {
    /// A timer the engine armed is due. A timer that is no longer armed (cancelled, replaced, or
    /// of an ended session) is stale and changes nothing.
    public mutating func timerFired(_ timer: CallTimer, now: Int64) -> [CallEffect] {
        guard timers.take(timer), state.info?.sessionId == timer.sessionId else { return [] }
        switch (timer.kind, state) {
        case (.callDeadline, .ringingIncoming(let ring)):
            // 3.1.5: "Deadline passes unanswered: device -> app not_answered, the session ends with
            // reason timeout."
            var effects: [CallEffect] = [
                .send(.outgoing(.notAnswered, from: devId, to: ring.caller, session: ring.info.sessionId,
                                reason: .timeout)),
            ]
            effects += end(Ending(.notAnswered, by: .local, reason: .timeout), now: now)
            return effects

        case (.callDeadline, .ringingOutgoing(let ring)):
            // 3.2.4: "device -> every target still ringing not_answered; session ends with reason
            // timeout."
            var effects: [CallEffect] = ring.remaining.map {
                .send(.outgoing(.notAnswered, from: devId, to: $0, session: ring.info.sessionId, reason: .timeout))
            }
            effects += end(Ending(.notAnswered, by: .local, reason: .timeout), now: now)
            return effects

        case (.autoAnswer, .ringingIncoming(let ring)):
            // 3.1.3: policy answerAfter.
            return answerIncoming(ring, now: now)

        case (.autoReject, .ringingIncoming(let ring)):
            // 3.1.3: policy rejectAfter (the owner declines after a moment of ringing).
            return refuseIncoming(ring, with: .reject, now: now)

        case (.connectTimeout, .answered(let call)) where call.media == .awaitingConnect:
            // 3.3: "P2P link not up within connectTimeout after answer: device sends stop with
            // reason connect_failed."
            return stopAnswered(call, reason: .connectFailed, now: now)

        case (.mediaLost, .answered(let call)):
            // 3.3: "P2P link lost and not back within 5 s: stop with reason disconnected."
            return stopAnswered(call, reason: .disconnected, now: now)

        case (.heartbeatWatchdog, .answered(let call)):
            // 3.3: "No heartbeat from the app for heartbeatTimeout: the device ends the call and
            // sends stop with reason heartbeat_timeout."
            return stopAnswered(call, reason: .heartbeatTimeout, now: now)

        case (.callDeadline, _), (.autoAnswer, _), (.autoReject, _), (.connectTimeout, _), (.mediaLost, _),
             (.heartbeatWatchdog, _), (.heartbeatSend, _),
             // The doorbell and power timers of PROTOCOL.md 8 are never armed by this role.
             (.ringTimeout, _), (.messageWindow, _), (.sleepAfter, _), (.wakeLatency, _), (.batteryDrain, _):
            // Armed for a phase the session has left (cancelled with it); nothing to do.
            return []
        }
    }
}
