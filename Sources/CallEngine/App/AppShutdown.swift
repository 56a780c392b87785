import IPCWire

extension AppCallEngine {
    /// The app stops: like the device (PROTOCOL.md 3.3), an answered call gets `hang_up`, the
    /// device's ringing call gets `reject`, its own ringing call gets `cancel`; reason `shutdown`.
    public mutating func shutdown(now: Int64) -> [CallEffect] {
        switch state {
        case .shutDown:
            return []
        case .idle:
            state = .shutDown
            return []
        case .calling(let call):
            var effects: [CallEffect] = [
                .send(.outgoing(.cancel, from: userId, to: call.device, session: call.info.sessionId, reason: .shutdown)),
            ]
            effects += end(Ending(.cancelled, by: .local, reason: .shutdown), now: now, then: .shutDown)
            return effects
        case .ringing(let ring):
            var effects: [CallEffect] = [
                .send(.outgoing(.reject, from: userId, to: ring.caller, session: ring.info.sessionId, reason: .shutdown)),
            ]
            effects += end(Ending(.rejected, by: .local, reason: .shutdown), now: now, then: .shutDown)
            return effects
        case .answered(let call):
            var effects: [CallEffect] = [
                .send(.outgoing(.hangUp, from: userId, to: call.peer, session: call.info.sessionId, reason: .shutdown)),
            ]
            effects += end(Ending(.hungUp, by: .local, reason: .shutdown), now: now, then: .shutDown)
            return effects
        }
    }
}
