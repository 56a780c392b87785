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
        state = .answered(AppDoorbellCall(devId: ring.devId, callId: s, startedAt: ring.startedAt, deadline: ring.deadline,
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

    /// Ends the current call: stops the ringing (if ringing), closes the media link (if answered),
    /// cancels the timers, and reports the record (with its SDK error code) last. `answeredBy`: the
    /// other user who accepted, when that is why the call ends.
    mutating func end(_ ending: Ending, now: Int64, answeredBy other: String? = nil,
                      then next: AppDoorbellState = .idle) -> [CallEffect] {
        var effects: [CallEffect] = []
        let record: CallRecord
        switch state {
        case .idle, .shutDown:
            state = next
            return []
        case .ringing(let r), .accepting(let r):
            effects.append(.stopRinging(sessionId: r.callId))
            record = self.record(devId: r.devId, callId: r.callId, startedAt: r.startedAt, answeredBy: other,
                                 answeredAt: nil, ending, now: now)
        case .answered(let c):
            effects.append(.closeMediaLink(sessionId: c.callId))
            record = self.record(devId: c.devId, callId: c.callId, startedAt: c.startedAt, answeredBy: userId,
                                 answeredAt: c.answeredAt, ending, now: now)
        }
        effects += timers.cancelAll()
        effects.append(.callEnded(record))
        state = next
        return effects
    }

    func record(devId: String, callId: String, startedAt: Int64, answeredBy: String?, answeredAt: Int64?,
                _ ending: Ending, now: Int64) -> CallRecord {
        CallRecord(sessionId: callId, role: .app, direction: .incoming, localId: userId, peers: [devId],
                   answeredBy: answeredBy, callType: .oneToMoreSpecial, startedAt: startedAt, answeredAt: answeredAt,
                   endedAt: now, outcome: ending.outcome, endedBy: ending.endedBy, reason: ending.reason,
                   remoteReason: ending.remoteReason, sdkError: ending.sdkError)
    }

    /// The app stops (after §3.3): a ringing doorbell is declined, an accepted call stopped; each
    /// with reason `shutdown`. Afterwards everything is refused.
    public mutating func shutdown(now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = []
        switch state {
        case .shutDown:
            return []
        case .idle:
            break
        case .ringing(let r), .accepting(let r):
            effects.append(outgoing(.stop, devId: r.devId, callId: r.callId, reason: .shutdown))
        case .answered(let c):
            effects.append(outgoing(.stop, devId: c.devId, callId: c.callId, reason: .shutdown))
        }
        effects += end(Ending(.stopped, by: .local, reason: .shutdown), now: now, then: .shutDown)
        return effects
    }
}
