import IPCWire

extension DoorbellCallEngine {
    /// The operator, the control API or the button acts. Throws (and changes nothing) when the
    /// action makes no sense now.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        if case .shutDown = state { throw .shutDown }
        switch action {
        case .press(let press):
            return try self.press(press, now: now)

        case .cancel:
            // 8.2: "cancel (the operator cancelled before an accept)": to everyone (no uid).
            guard case .ringing(let ring) = state else { throw .wrongPhase(action: "cancel", phase: phase) }
            var effects: [CallEffect] = [outgoing(.cancel, callId: ring.callId)]
            effects += end(Ending(.cancelled, by: .local), now: now)
            return effects

        case .hangUp:
            // 8.2: "stop (the device or the operator ended the call; reason as §3.3)". **[ours]**: the
            // operator's hang-up is a `stop` to the accepting user with no `reason` (none of §3.3's
            // applies; an app reports it as the peer hanging up, -2513). Recorded as `hungUp`.
            guard case .connected(let call) = state else { throw .wrongPhase(action: "hang up", phase: phase) }
            return stopConnected(call, reason: nil, now: now)

        case .answer:
            throw .wrongPhase(action: "answer", phase: phase)
        case .reject:
            throw .wrongPhase(action: "reject", phase: phase)
        case .busy:
            throw .wrongPhase(action: "busy", phase: phase)

        case .startCall:
            throw .notInThisRole(action: "startCall", role: .device)

        case .setActingBusy(let on):
            isActingBusy = on
            return []

        case .setAnswerPolicy(let policy):
            answerPolicy = policy
            return []
        }
    }

    /// PROTOCOL.md 8.1: a press. `press.sessionId` is the call id the glue made with
    /// `makeDoorbellCallId(unixSeconds:using:)`; `press.timeoutMs`, when set, replaces
    /// `ringTimeoutMs` for this call; `targets` and `callType` do not apply (every household app
    /// sees the 43, 8.1).
    /// - Ringing or connected: "A press while a doorbell call is ringing or connected is counted and
    ///   ignored (no second 43)": throws `.onCalling` (the glue counts it).
    /// - Message window (8.5): "A press inside a message window records a message instead: no 43,
    ///   no DPs, no push": `.leaveMessage` for the missed call; the window closes **[ours]** (one
    ///   message per missed call; a later press starts a new call).
    /// - Otherwise: `.announcePress` (the glue sends the 43 and the DPs) and the ring timeout.
    private mutating func press(_ press: DoorbellPress, now: Int64) throws(CallActionError) -> [CallEffect] {
        if let callId = state.callId { throw .onCalling(sessionId: callId) }
        if case .messageWindow(let window) = state {
            var effects: [CallEffect] = [.leaveMessage(callId: window.callId)]
            effects += end(Ending(.cancelled, by: .local), now: now)
            return effects
        }
        guard !press.sessionId.isEmpty else { throw .invalidArgument("empty call id") }
        let ringMs = press.timeoutMs ?? config.ringTimeoutMs
        guard ringMs > 0 else { throw .invalidArgument("ring timeout \(ringMs) ms is not positive") }
        guard !config.members.isEmpty else { throw .noTargets }
        let deadline = now.addingSaturating(ringMs)
        state = .ringing(DoorbellRing(callId: press.sessionId, startedAt: now, deadline: deadline))
        return [.announcePress(callId: press.sessionId),
                timers.arm(CallTimer(.ringTimeout, sessionId: press.sessionId), at: deadline)]
    }
}
