import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.3: "The device shuts down (SIGTERM): an answered call gets hang_up, an incoming
    /// call still ringing gets reject, an outgoing call still ringing gets cancel to every target;
    /// each with reason shutdown." Afterwards every input is refused.
    public mutating func shutdown(now: Int64) -> [CallEffect] {
        let ending: Ending
        var effects: [CallEffect]
        switch state {
        case .shutDown:
            return []
        case .idle:
            state = .shutDown
            return []
        case .ringingIncoming(let ring):
            effects = [.send(.outgoing(.reject, from: devId, to: ring.caller, session: ring.info.sessionId,
                                       reason: .shutdown))]
            ending = Ending(.rejected, by: .local, reason: .shutdown)
        case .ringingOutgoing(let ring):
            effects = ring.remaining.map {
                .send(.outgoing(.cancel, from: devId, to: $0, session: ring.info.sessionId, reason: .shutdown))
            }
            ending = Ending(.cancelled, by: .local, reason: .shutdown)
        case .answered(let call):
            effects = [.send(.outgoing(.hangUp, from: devId, to: call.peer, session: call.info.sessionId,
                                       reason: .shutdown))]
            ending = Ending(.hungUp, by: .local, reason: .shutdown)
        }
        effects += end(ending, now: now, then: .shutDown)
        return effects
    }
}
