import IPCWire

extension AppCallEngine {
    /// Ends the current call: stops the ringing (if ringing), closes the media link (if answered),
    /// cancels the timers, and reports the record (with its SDK error code) last.
    mutating func end(_ ending: Ending, now: Int64, then next: AppState = .idle) -> [CallEffect] {
        var effects: [CallEffect] = []
        let record: CallRecord
        switch state {
        case .idle, .shutDown:
            state = next
            return []
        case .calling(let call):
            record = call.info.record(role: .app, localId: userId, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .ringing(let ring):
            effects.append(.stopRinging(sessionId: ring.info.sessionId))
            record = ring.info.record(role: .app, localId: userId, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .answered(let call):
            effects.append(.closeMediaLink(sessionId: call.info.sessionId))
            record = call.info.record(role: .app, localId: userId, answeredBy: call.answeredBy, answeredAt: call.answeredAt, ending, now: now)
        }
        effects += timers.cancelAll()
        effects.append(.callEnded(record))
        state = next
        return effects
    }

    /// PROTOCOL.md 3.3: once answered (either direction) the app sends a heartbeat every
    /// `heartbeatInterval` and watches for replies; the media link is expected.
    mutating func beginAnswered(_ call: ActiveCall, now: Int64) -> [CallEffect] {
        let s = call.info.sessionId
        var effects: [CallEffect] = [.expectMediaLink(sessionId: s, peer: call.peer)]
        effects += timers.cancelAll()
        effects.append(timers.arm(CallTimer(.heartbeatSend, sessionId: s), at: now.addingSaturating(config.heartbeatIntervalMs)))
        effects.append(timers.arm(CallTimer(.heartbeatWatchdog, sessionId: s), at: now.addingSaturating(config.heartbeatTimeoutMs)))
        state = .answered(call)
        return effects
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
