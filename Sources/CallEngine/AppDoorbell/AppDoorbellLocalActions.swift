import IPCWire

extension AppDoorbellEngine {
    /// The SDK user acts on the doorbell call. Throws (and changes nothing) when the action makes no
    /// sense now.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        if case .shutDown = state { throw .shutDown }
        switch action {
        case .answer:
            // 8.2: accept.
            guard case .ringing(let ring) = state else { throw .wrongPhase(action: "accept", phase: phase) }
            return accept(ring, now: now)

        case .reject, .busy:
            // 8.2: decline (`stop` before an accept).
            guard case .ringing(let ring) = state else { throw .wrongPhase(action: "decline", phase: phase) }
            return decline(ring, reason: nil, now: now)

        case .hangUp:
            // 8.2: `stop`: a decline before the accept is answered, a hang-up after.
            switch state {
            case .ringing(let ring), .accepting(let ring):
                return decline(ring, reason: nil, now: now)
            case .answered(let call):
                var effects: [CallEffect] = [outgoing(.stop, devId: call.peer, callId: call.callId)]
                effects += end(Ending(.hungUp, by: .local), now: now)
                return effects
            case .idle, .shutDown:
                throw .wrongPhase(action: "hang up", phase: phase)
            }

        case .cancel:
            throw .wrongPhase(action: "cancel", phase: phase)

        case .press:
            throw .notInThisRole(action: "press", role: .app)
        case .startCall:
            throw .notInThisRole(action: "startCall", role: .app)
        case .setActingBusy:
            throw .notInThisRole(action: "act busy", role: .app)

        case .setAnswerPolicy(let policy):
            config.policy = policy
            return []
        }
    }
}
