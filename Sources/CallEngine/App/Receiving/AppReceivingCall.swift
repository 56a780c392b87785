import IPCWire

extension AppCallEngine {
    /// A device calls this app (PROTOCOL.md 3.2, listen mode). The app checks the call like a
    /// device does (3.4, mirrored), replies `busy` when it is on another call (3.2.2), repeats its
    /// last reply for a redelivered call, and otherwise rings and applies its auto policy.
    mutating func receiveCall(_ call: CallMessage, now: Int64) -> [CallEffect] {
        let deadline: Int64
        switch CallValidation.check(call, localId: userId, supported: config.supportedChannelTypes, now: now) {
        case .invalid(let why):
            return [.refused(call, .invalidParams(why)),
                    .send(call.reply(.stop, from: userId, reason: .invalidParams))]
        case .valid(let d):
            deadline = d
        }

        // A redelivered call: the last reply again.
        switch state {
        case .ringing(let ring) where ring.info.sessionId == call.sessionId && ring.caller == call.curId:
            return config.ringsOnIncomingCall ? [.send(call.reply(.ring, from: userId))] : []
        case .answered(let active) where active.info.direction == .incoming
            && active.info.sessionId == call.sessionId && active.peer == call.curId:
            return [.send(call.reply(.answer, from: userId))]
        case .idle, .shutDown, .calling, .ringing, .answered:
            break
        }

        guard deadline > now else {
            return [.refused(call, .expired(deadline: deadline, now: now)),
                    .send(call.reply(.stop, from: userId, reason: .expired))]
        }

        // 3.2.2: the app may answer busy; it does when it is already on a call.
        if state.info != nil {
            return [.send(call.reply(.busy, from: userId, reason: .busy))]
        }

        let info = SessionInfo(sessionId: call.sessionId, direction: .incoming, callType: call.callType ?? .oneToOne,
                               deadline: deadline, startedAt: now, peers: [call.curId],
                               extra: call.extra ?? CallExtra())
        let ring = IncomingRing(info: info)
        state = .ringing(ring)
        var effects: [CallEffect] = []
        // 3.2.2: "App -> device ring (optional)".
        if config.ringsOnIncomingCall { effects.append(.send(call.reply(.ring, from: userId))) }
        effects.append(.startRinging(sessionId: call.sessionId))
        effects.append(timers.arm(CallTimer(.callDeadline, sessionId: call.sessionId), at: deadline.addingSaturating(config.deadlineGraceMs)))
        effects += applyIncomingPolicy(to: ring, now: now)
        return effects
    }

    private mutating func applyIncomingPolicy(to ring: IncomingRing, now: Int64) -> [CallEffect] {
        switch config.incomingPolicy {
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
}
