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
            record = makeRecord(call.info, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .ringing(let ring):
            effects.append(.stopRinging(sessionId: ring.info.sessionId))
            record = makeRecord(ring.info, answeredBy: nil, answeredAt: nil, ending, now: now)
        case .answered(let call):
            effects.append(.closeMediaLink(sessionId: call.info.sessionId))
            record = makeRecord(call.info, answeredBy: call.answeredBy, answeredAt: call.answeredAt, ending, now: now)
        }
        effects += timers.cancelAll()
        effects.append(.callEnded(record))
        state = next
        return effects
    }

    private func makeRecord(_ info: SessionInfo, answeredBy: String?, answeredAt: Int64?, _ ending: Ending,
                            now: Int64) -> CallRecord {
        CallRecord(sessionId: info.sessionId, role: .app, direction: info.direction, localId: userId,
                   peers: info.peers, answeredBy: answeredBy, callType: info.callType, startedAt: info.startedAt,
                   answeredAt: answeredAt, endedAt: now, outcome: ending.outcome, endedBy: ending.endedBy,
                   reason: ending.reason, remoteReason: ending.remoteReason, sdkError: ending.sdkError)
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

    /// The app answers the device's call that rings.
    mutating func answerIncoming(_ ring: IncomingRing, now: Int64) -> [CallEffect] {
        let s = ring.info.sessionId
        var effects: [CallEffect] = [
            .send(.outgoing(.answer, from: userId, to: ring.caller, session: s)),
            .stopRinging(sessionId: s),
        ]
        effects += beginAnswered(ActiveCall(info: ring.info, peer: ring.caller, answeredBy: userId,
                                            answeredAt: now, media: .awaitingConnect), now: now)
        return effects
    }

    /// The app refuses the device's call that rings with `reject` or `busy` (its own doing: no
    /// SDK error).
    mutating func refuseIncoming(_ ring: IncomingRing, with event: CallEvent, now: Int64) -> [CallEffect] {
        let isBusy = event == .busy
        var effects: [CallEffect] = [
            .send(.outgoing(event, from: userId, to: ring.caller, session: ring.info.sessionId,
                            reason: isBusy ? .busy : nil)),
        ]
        effects += end(Ending(isBusy ? .busy : .rejected, by: .local, reason: isBusy ? .busy : .rejected), now: now)
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
