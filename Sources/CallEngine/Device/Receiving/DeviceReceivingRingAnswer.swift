import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.2.2: a target of the device's call rings (optional; no reply).
    mutating func receiveRing(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(var ring) = state else { return unexpected(message) }
        if !ring.rang.contains(message.curId) { ring.rang.append(message.curId) }
        state = .ringingOutgoing(ring)
        return [.peerRinging(sessionId: ring.info.sessionId, peer: message.curId)]
    }

    /// PROTOCOL.md 3.2.2-3: a target answers. The first answer wins; every other target still in
    /// the call gets `already_answered` (types 2 and 3; type 1 has no other target).
    mutating func receiveAnswer(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(let ring) = state else { return unexpected(message) }
        let s = ring.info.sessionId
        var effects: [CallEffect] = ring.remaining
            .filter { $0 != message.curId }
            .map { .send(.outgoing(.alreadyAnswered, from: devId, to: $0, session: s)) }
        // 3.2.6: the answering app then opens the P2P link.
        effects += beginAnswered(ActiveCall(info: ring.info, peer: message.curId, answeredBy: message.curId,
                                            answeredAt: now, media: .awaitingConnect), now: now)
        return effects
    }
}
