import IPCWire

extension AppDoorbellEngine {
    /// Our accept was answered (8.2): the P2P link with `sessionid` = the call id may be opened,
    /// heartbeats start every `heartbeatInterval`, and a watchdog waits for the device's replies
    /// (§3.3).
    mutating func beginAnswered(_ ring: AppDoorbellRing, now: Int64) -> [CallEffect] {
        let s = ring.callId
        var effects: [CallEffect] = [.stopRinging(sessionId: s), .expectMediaLink(sessionId: s, peer: ring.devId)]
        effects += timers.cancelAll()
        effects.append(timers.arm(CallTimer(.heartbeatSend, sessionId: s), at: now.addingSaturating(config.heartbeatIntervalMs)))
        effects.append(timers.arm(CallTimer(.heartbeatWatchdog, sessionId: s), at: now.addingSaturating(config.heartbeatTimeoutMs)))
        state = .answered(DoorbellCall(callId: s, peer: ring.devId, startedAt: ring.startedAt, deadline: ring.deadline,
                                       answeredAt: now, media: .awaitingConnect))
        return effects
    }

    /// 8.2: `accept`; the device's `answered` decides whose the call is.
    mutating func accept(_ ring: AppDoorbellRing, now: Int64) -> [CallEffect] {
        state = .accepting(ring)
        var effects = timers.cancel(CallTimer(.autoAnswer, sessionId: ring.callId))
        effects += timers.cancel(CallTimer(.autoReject, sessionId: ring.callId))
        effects.insert(outgoing(.accept, devId: ring.devId, callId: ring.callId), at: 0)
        return effects
    }

    /// 8.2: "stop (before an accept: this user declines, the call rings on for the others)". No SDK
    /// error: our own doing.
    mutating func decline(_ ring: AppDoorbellRing, reason: StopReason?, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [outgoing(.stop, devId: ring.devId, callId: ring.callId, reason: reason)]
        effects += end(Ending(.rejected, by: .local, reason: reason), now: now)
        return effects
    }

    /// The current call as it ends (see `end`): a ringing one stops ringing, an answered one closes
    /// its link. `ending.answeredBy`: the other user who accepted, when that is why the call ends.
    func closingCall(_ ending: Ending, now: Int64) -> ClosingCall? {
        switch state {
        case .idle, .shutDown:
            return nil
        case .ringing(let r), .accepting(let r):
            return ClosingCall(sessionId: r.callId, stopsRinging: true,
                               record: record(devId: r.devId, callId: r.callId, startedAt: r.startedAt,
                                              answeredBy: ending.answeredBy, answeredAt: nil, ending, now: now))
        case .answered(let c):
            return ClosingCall(sessionId: c.callId, closesLink: true,
                               record: record(devId: c.peer, callId: c.callId, startedAt: c.startedAt,
                                              answeredBy: userId, answeredAt: c.answeredAt, ending, now: now))
        }
    }

    func record(devId: String, callId: String, startedAt: Int64, answeredBy: String?, answeredAt: Int64?,
                _ ending: Ending, now: Int64) -> CallRecord {
        CallRecord(sessionId: callId, role: .app, direction: .incoming, localId: userId, peers: [devId],
                   answeredBy: answeredBy, callType: .oneToMoreSpecial, startedAt: startedAt, answeredAt: answeredAt,
                   endedAt: now, outcome: ending.outcome, endedBy: ending.endedBy, reason: ending.reason,
                   remoteReason: ending.remoteReason, sdkError: ending.sdkError)
    }

    /// The app stops (after §3.3): a ringing doorbell is declined, an accepted call stopped; each
    /// with reason `shutdown`. Afterwards everything is refused (`shutdown` in
    /// Shared/CallEnding.swift).
    func farewell() -> Farewell? {
        guard let call = state.call else { return nil }
        return Farewell(messages: [outgoing(.stop, devId: call.devId, callId: call.callId, reason: .shutdown)],
                        ending: Ending(.stopped, by: .local, reason: .shutdown))
    }

    /// The answered call's P2P link: only recorded (the device enforces the link timers).
    var linkedMedia: (sessionId: String, media: MediaLinkState)? {
        guard case .answered(let call) = state else { return nil }
        return (call.callId, call.media)
    }

    mutating func setLinkedMedia(_ media: MediaLinkState) {
        guard case .answered(var call) = state else { return }
        call.media = media
        state = .answered(call)
    }

    var mediaLostGraceMs: Int64? { nil }
}
