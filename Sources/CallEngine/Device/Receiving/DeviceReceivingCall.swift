import IPCWire

extension DeviceCallEngine {
    /// An app calls the device (PROTOCOL.md 3.1), checked per 3.4.
    mutating func receiveCall(_ call: CallMessage, now: Int64) -> [CallEffect] {
        // 3.4: a bad target, extra, bizType or channelType: stop invalid_params, nothing changes.
        let deadline: Int64
        switch CallValidation.check(call, localId: devId, supported: config.supportedChannelTypes, now: now) {
        case .invalid(let why):
            return [.refused(call, .invalidParams(why)),
                    .send(call.reply(.stop, from: devId, reason: .invalidParams))]
        case .valid(let d):
            deadline = d
        }

        // 3.1.2: "A repeated call for the session it already has: the device sends its last reply
        // for that session again (ring while ringing, answer once answered), nothing else changes."
        switch state {
        case .ringingIncoming(let ring) where ring.info.sessionId == call.sessionId && ring.caller == call.curId:
            return [.send(call.reply(.ring, from: devId))]
        case .answered(let active) where active.info.direction == .incoming
            && active.info.sessionId == call.sessionId && active.peer == call.curId:
            return [.send(call.reply(.answer, from: devId))]
        case .idle, .shutDown, .ringingIncoming, .ringingOutgoing, .answered:
            break
        }

        // 3.4: "A call whose deadline has already passed: stop with reason expired."
        guard deadline > now else {
            return [.refused(call, .expired(deadline: deadline, now: now)),
                    .send(call.reply(.stop, from: devId, reason: .expired))]
        }

        // 3.1.2: "A valid call while the device is in another session: device -> app busy and
        // nothing else changes." (Fault injection `actingBusy` answers the same way.)
        if state.info != nil || isActingBusy {
            return [.send(call.reply(.busy, from: devId, reason: .busy))]
        }

        // 3.1.3: "Valid and free: device -> app ring at once, and the device rings (its answer
        // policy decides ...)". 3.1.5: the deadline timer starts.
        let info = SessionInfo(sessionId: call.sessionId, direction: .incoming, callType: call.callType ?? .oneToOne,
                               deadline: deadline, startedAt: now, peers: [call.curId],
                               extra: call.extra ?? CallExtra())
        let ring = IncomingRing(info: info)
        state = .ringingIncoming(ring)
        var effects: [CallEffect] = [
            .send(call.reply(.ring, from: devId)),
            .startRinging(sessionId: call.sessionId),
            timers.arm(CallTimer(.callDeadline, sessionId: call.sessionId), at: deadline),
        ]
        effects += applyAnswerPolicy(to: ring, now: now)
        return effects
    }

    /// 3.1.3: the answer policy decides what the ringing device does.
    private mutating func applyAnswerPolicy(to ring: IncomingRing, now: Int64) -> [CallEffect] {
        switch config.answerPolicy {
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
