import IPCWire

extension DeviceCallEngine {
    /// The operator or the control API acts. Throws (and changes nothing) when the action makes no
    /// sense now.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        if case .shutDown = state { throw .shutDown }
        switch action {
        case .press(let press):
            return try self.press(press, now: now)

        case .startCall:
            throw .notInThisRole(action: "startCall", role: .device)

        case .answer, .reject, .busy:
            return try performOnRinging(action, now: now)

        case .cancel:
            // 3.2.5: "The device may cancel before an answer: device -> every target cancel."
            guard case .ringingOutgoing(let ring) = state else { throw .wrongPhase(action: "cancel", phase: phase) }
            var effects: [CallEffect] = ring.remaining.map {
                .send(.outgoing(.cancel, from: devId, to: $0, session: ring.info.sessionId))
            }
            effects += end(Ending(.cancelled, by: .local), now: now)
            return effects

        case .hangUp:
            // 3.1.7: either side may hang up; the other does not reply.
            guard case .answered(let call) = state else { throw .wrongPhase(action: "hang up", phase: phase) }
            var effects: [CallEffect] = [.send(.outgoing(.hangUp, from: devId, to: call.peer, session: call.info.sessionId))]
            effects += end(Ending(.hungUp, by: .local), now: now)
            return effects

        case .setActingBusy(let on):
            isActingBusy = on
            return []

        case .setAnswerPolicy(let policy):
            config.answerPolicy = policy
            return []
        }
    }

    /// PROTOCOL.md 3.2.1: "Device -> each target user call (one message per target, same
    /// sessionId, curId = devId). Call type 1 calls exactly one target: the one the press names,
    /// else the first of the household."
    private mutating func press(_ press: DoorbellPress, now: Int64) throws(CallActionError) -> [CallEffect] {
        if let info = state.info { throw .onCalling(sessionId: info.sessionId) }
        guard !press.sessionId.isEmpty else { throw .invalidArgument("empty session id") }
        let timeout = press.timeoutMs ?? config.defaultCallTimeoutMs
        guard timeout > 0 else { throw .invalidArgument("call timeout \(timeout) ms is not positive") }
        let callType = press.callType ?? config.defaultCallType

        var targets: [String] = []
        for user in (press.targets.isEmpty ? config.household : press.targets)
        where !user.isEmpty && user != devId && !targets.contains(user) {
            targets.append(user)
        }
        guard let first = targets.first else { throw .noTargets }
        if callType == .oneToOne { targets = [first] }

        let deadline = now.addingSaturating(timeout)
        let extra = CallExtra(bizType: screenIPCBizType, channelType: config.outgoingChannelType.rawValue,
                              category: config.category, keepConnect: false)
        let info = SessionInfo(sessionId: press.sessionId, direction: .outgoing, callType: callType,
                               deadline: deadline, startedAt: now, peers: targets, extra: extra)
        state = .ringingOutgoing(OutgoingRing(info: info))
        var effects: [CallEffect] = targets.map {
            .send(CallMessage(event: .call, curId: devId, targetId: $0, sessionId: press.sessionId,
                              timeout: deadline, callType: callType, extra: extra))
        }
        // 3.2.4: the deadline.
        effects.append(timers.arm(CallTimer(.callDeadline, sessionId: press.sessionId), at: deadline))
        return effects
    }
}
