import IPCWire

extension DoorbellCallEngine {
    /// The device shuts down (SIGTERM). **[ours]**, after §3.3: a call still ringing gets `cancel`
    /// (to everyone, no `uid`) with reason `shutdown`; a connected call gets `stop` with reason
    /// `shutdown` to the accepting user; an open message window just closes. Afterwards every input
    /// is refused.
    public mutating func shutdown(now: Int64) -> [CallEffect] {
        switch state {
        case .shutDown:
            return []
        case .idle, .messageWindow:
            return end(Ending(.cancelled, by: .local, reason: .shutdown), now: now, then: .shutDown)
        case .ringing(let ring):
            var effects: [CallEffect] = [outgoing(.cancel, callId: ring.callId, reason: .shutdown)]
            effects += end(Ending(.cancelled, by: .local, reason: .shutdown), now: now, then: .shutDown)
            return effects
        case .connected(let call):
            var effects: [CallEffect] = [outgoing(.stop, callId: call.callId, uid: call.uid, reason: .shutdown)]
            effects += end(Ending(.stopped, by: .local, reason: .shutdown), now: now, then: .shutDown)
            return effects
        }
    }
}
