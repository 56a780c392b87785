import IPCWire

/// The incoming-call rules both roles follow: a device called by an app (PROTOCOL.md 3.1) and an
/// app called by a device in listen mode (3.2.2) check the call, repeat their last reply for a
/// redelivered call, refuse an expired one, reply `busy` when in another session, and otherwise
/// ring and apply their answer policy.
extension CallRoleRules {
    /// A `call` arrived (already known to name a sender and a session).
    mutating func receiveCall(_ call: CallMessage, now: Int64) -> [CallEffect] {
        let rules = incomingRules
        // 3.4: a bad target, extra, bizType or channelType: stop invalid_params, nothing changes.
        let deadline: Int64
        switch CallValidation.check(call, localId: localId, supported: rules.supportedChannelTypes, now: now) {
        case .invalid(let why):
            return [.refused(call, .invalidParams(why)),
                    .send(call.reply(.stop, from: localId, reason: .invalidParams))]
        case .valid(let d):
            deadline = d
        }

        // 3.1.2: "A repeated call for the session it already has: the device sends its last reply
        // for that session again (ring while ringing, answer once answered), nothing else changes."
        // The app does the same (with no reply while ringing if it does not ring back).
        if let ring = ringingIncoming, ring.info.sessionId == call.sessionId, ring.caller == call.curId {
            return rules.ringsBack ? [.send(call.reply(.ring, from: localId))] : []
        }
        if let active = answeredSession, active.info.direction == .incoming,
           active.info.sessionId == call.sessionId, active.peer == call.curId {
            return [.send(call.reply(.answer, from: localId))]
        }

        // [ours] A `call` for a session this side has already ended (a late duplicate): dropped and
        // counted, no reply, no ring (EndedSessions).
        if endedSessions.contains(call.sessionId) {
            return [.refused(call, .sessionEnded)]
        }

        // 3.4: "A call whose deadline has already passed: stop with reason expired."
        guard deadline > now else {
            return [.refused(call, .expired(deadline: deadline, now: now)),
                    .send(call.reply(.stop, from: localId, reason: .expired))]
        }

        // 3.1.2: "A valid call while the device is in another session: device -> app busy and
        // nothing else changes." 3.2.2: the app may answer busy; it does when on another call.
        // (Fault injection `actingBusy` answers the same way.)
        if sessionInfo != nil || rules.actsBusy {
            return [.send(call.reply(.busy, from: localId, reason: .busy))]
        }

        // 3.1.3: "Valid and free: device -> app ring at once, and the device rings (its answer
        // policy decides ...)"; 3.2.2 "App -> device ring (optional)". 3.1.5: the deadline timer.
        let info = SessionInfo(sessionId: call.sessionId, direction: .incoming, callType: call.callType ?? .oneToOne,
                               deadline: deadline, startedAt: now, peers: [call.curId],
                               extra: call.extra ?? CallExtra())
        let ring = IncomingRing(info: info)
        enterRinging(ring)
        var effects: [CallEffect] = []
        if rules.ringsBack { effects.append(.send(call.reply(.ring, from: localId))) }
        effects.append(.startRinging(sessionId: call.sessionId))
        effects.append(timers.arm(CallTimer(.callDeadline, sessionId: call.sessionId),
                                  at: deadline.addingSaturating(rules.deadlineGraceMs)))
        effects += applyAnswerPolicy(rules.policy, to: ring, now: now)
        return effects
    }

    /// 3.1.3: the answer policy decides what the ringing role does.
    private mutating func applyAnswerPolicy(_ policy: AnswerPolicy, to ring: IncomingRing, now: Int64) -> [CallEffect] {
        switch policy {
        case .answerAfter(let ms) where ms <= 0:
            return answerIncoming(ring, now: now)
        case .answerAfter(let ms):
            return [timers.arm(CallTimer(.autoAnswer, sessionId: ring.info.sessionId), at: now.addingSaturating(ms))]
        case .reject, .rejectAfter(ms: ...0):
            return refuseIncoming(ring, with: .reject, now: now)
        case .rejectAfter(let ms):
            return [timers.arm(CallTimer(.autoReject, sessionId: ring.info.sessionId), at: now.addingSaturating(ms))]
        case .busy:
            return refuseIncoming(ring, with: .busy, now: now)
        case .ignore, .manual:
            return []
        }
    }

    /// The local actions on the incoming call that rings, the same in both roles: `answer`,
    /// `reject`, `busy`. Throws (and changes nothing) when no incoming call rings.
    mutating func performOnRinging(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        let name = switch action {
        case .answer: "answer"
        case .busy: "busy"
        default: "reject"
        }
        guard let ring = ringingIncoming else { throw .wrongPhase(action: name, phase: phase) }
        switch action {
        case .answer: return answerIncoming(ring, now: now)
        case .busy: return refuseIncoming(ring, with: .busy, now: now)
        default: return refuseIncoming(ring, with: .reject, now: now)
        }
    }

    /// Enters the answered state (either direction): the media link is expected from the peer, the
    /// ringing timers go, the role's answered timers start.
    mutating func beginAnswered(_ call: ActiveCall, now: Int64) -> [CallEffect] {
        let s = call.info.sessionId
        var effects: [CallEffect] = [.expectMediaLink(sessionId: s, peer: call.peer)]
        effects += timers.cancelAll()
        for (timer, at) in answeredTimers(sessionId: s, now: now) { effects.append(timers.arm(timer, at: at)) }
        state = .answered(call)
        return effects
    }

    /// Answers the incoming call that rings (operator, SDK user, or policy `answerAfter`).
    mutating func answerIncoming(_ ring: IncomingRing, now: Int64) -> [CallEffect] {
        let s = ring.info.sessionId
        var effects: [CallEffect] = [
            .send(.outgoing(.answer, from: localId, to: ring.caller, session: s)),
            .stopRinging(sessionId: s),
        ]
        effects += beginAnswered(ActiveCall(info: ring.info, peer: ring.caller, answeredBy: localId,
                                            answeredAt: now, media: .awaitingConnect), now: now)
        return effects
    }

    /// Refuses the incoming call that rings with `reject` or `busy` (a local decision: for the app,
    /// no SDK error).
    mutating func refuseIncoming(_ ring: IncomingRing, with event: CallEvent, now: Int64) -> [CallEffect] {
        let isBusy = event == .busy
        var effects: [CallEffect] = [
            .send(.outgoing(event, from: localId, to: ring.caller, session: ring.info.sessionId,
                            reason: isBusy ? .busy : nil)),
        ]
        effects += endSession(Ending(isBusy ? .busy : .rejected, by: .local, reason: isBusy ? .busy : .rejected), now: now)
        return effects
    }
}
