import IPCWire

extension DoorbellCallEngine {
    /// The device shuts down (SIGTERM). **[ours]**, after §3.3: a call still ringing gets `cancel`
    /// (to everyone, no `uid`) with reason `shutdown`; a connected call gets `stop` with reason
    /// `shutdown` to the accepting user; an open message window just closes. Afterwards every input
    /// is refused (`shutdown` in Shared/CallEnding.swift).
    func farewell() -> Farewell? {
        switch state {
        case .shutDown, .idle, .messageWindow:
            return nil
        case .ringing(let ring):
            return Farewell(messages: [outgoing(.cancel, callId: ring.callId, reason: .shutdown)],
                            ending: Ending(.cancelled, by: .local, reason: .shutdown))
        case .connected(let call):
            return Farewell(messages: [outgoing(.stop, callId: call.callId, uid: call.peer, reason: .shutdown)],
                            ending: Ending(.stopped, by: .local, reason: .shutdown))
        }
    }
}
