import IPCWire

extension AppCallEngine {
    /// The SDK user acts. Throws (and changes nothing) when the action makes no sense now.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        if case .shutDown = state { throw .shutDown }
        switch action {
        case .startCall(let start):
            return try startCall(start, now: now)

        case .press:
            throw .notInThisRole(action: "press", role: .app)

        case .setActingBusy:
            throw .notInThisRole(action: "act busy", role: .app)

        case .answer, .reject, .busy:
            return try performOnRinging(action, now: now)

        case .cancel:
            guard case .ringingOutgoing(let call) = state else { throw .wrongPhase(action: "cancel", phase: phase) }
            return cancelOutgoing(call, reason: nil, now: now)

        case .hangUp:
            // The SDK's hang-up: ends an answered call; before the answer it cancels our own call
            // or rejects the device's.
            switch state {
            case .answered(let call):
                var effects: [CallEffect] = [
                    .send(.outgoing(.hangUp, from: userId, to: call.peer, session: call.info.sessionId)),
                ]
                effects += end(Ending(.hungUp, by: .local), now: now)
                return effects
            case .ringingOutgoing(let call):
                return cancelOutgoing(call, reason: nil, now: now)
            case .ringingIncoming(let ring):
                return refuseIncoming(ring, with: .reject, now: now)
            case .idle, .shutDown:
                throw .wrongPhase(action: "hang up", phase: phase)
            }

        case .setAnswerPolicy(let policy):
            config.incomingPolicy = policy
            return []
        }
    }

    /// The SDK's `startCall`: one `call` to the device; -2520 (on calling) without sending when a
    /// call is already on.
    private mutating func startCall(_ start: StartCall, now: Int64) throws(CallActionError) -> [CallEffect] {
        if let info = state.info { throw .onCalling(sessionId: info.sessionId) }
        guard !start.targetId.isEmpty else { throw .invalidArgument("empty targetId") }
        guard !start.sessionId.isEmpty else { throw .invalidArgument("empty session id") }
        guard start.timeoutSeconds > 0 else {
            throw .invalidArgument("timeout \(start.timeoutSeconds) s is not positive")
        }
        // PROTOCOL.md 3: "the SDK API takes seconds and converts" to an absolute deadline in ms.
        let deadline = now.addingSaturating(start.timeoutSeconds.multipliedSaturating(by: 1000))
        let info = SessionInfo(sessionId: start.sessionId, direction: .outgoing, callType: start.callType,
                               deadline: deadline, startedAt: now, peers: [start.targetId], extra: start.extra)
        state = .ringingOutgoing(AppOutgoingCall(info: info))
        return [
            .send(CallMessage(event: .call, curId: userId, targetId: start.targetId, sessionId: start.sessionId,
                              timeout: deadline, callType: start.callType, extra: start.extra,
                              appDeviceId: config.appDeviceId)),
            timers.arm(CallTimer(.callDeadline, sessionId: start.sessionId), at: deadline.addingSaturating(config.deadlineGraceMs)),
        ]
    }
}
