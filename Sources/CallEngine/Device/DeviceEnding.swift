import IPCWire

extension DeviceCallEngine {
    /// Ends the current session: stops the bell (if ringing), closes the media link (if answered),
    /// cancels the session's timers, and reports the record last. The caller has already added the
    /// messages the ending sends.
    mutating func end(_ ending: Ending, now: Int64, then next: DeviceState = .idle) -> [CallEffect] {
        var effects: [CallEffect] = []
        let record: CallRecord
        switch state {
        case .idle, .shutDown:
            state = next
            return []
        case .ringingIncoming(let ring):
            effects.append(.stopRinging(sessionId: ring.info.sessionId))
            record = ring.info.record(role: .device, localId: devId, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .ringingOutgoing(let ring):
            record = ring.info.record(role: .device, localId: devId, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .answered(let call):
            effects.append(.closeMediaLink(sessionId: call.info.sessionId))
            record = call.info.record(role: .device, localId: devId, answeredBy: call.answeredBy, answeredAt: call.answeredAt, ending, now: now)
        }
        effects += timers.cancelAll()
        effects.append(.callEnded(record))
        state = next
        return effects
    }

    /// Enters the answered phase (PROTOCOL.md 3.1.6, 3.2.6, 3.3): the media link is expected from
    /// the peer, the ringing timers go, `connectTimeout` and the heartbeat watchdog start.
    mutating func beginAnswered(_ call: ActiveCall, now: Int64) -> [CallEffect] {
        let s = call.info.sessionId
        var effects: [CallEffect] = [.expectMediaLink(sessionId: s, peer: call.peer)]
        effects += timers.cancelAll()
        effects.append(timers.arm(CallTimer(.connectTimeout, sessionId: s), at: now.addingSaturating(config.connectTimeoutMs)))
        effects.append(timers.arm(CallTimer(.heartbeatWatchdog, sessionId: s), at: now.addingSaturating(config.heartbeatTimeoutMs)))
        state = .answered(call)
        return effects
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
