import IPCWire

extension AppCallEngine {
    /// PROTOCOL.md 3.1.3: the called device rings.
    mutating func receiveRing(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(var call) = state else { return unexpected(message) }
        call.peerRang = true
        state = .ringingOutgoing(call)
        return [.peerRinging(sessionId: call.info.sessionId, peer: call.device)]
    }

    /// PROTOCOL.md 3.1.4: the called device answers; 3.1.6 the app opens the P2P link; 3.3 the app
    /// starts its heartbeats.
    mutating func receiveAnswer(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(let call) = state else { return unexpected(message) }
        return beginAnswered(ActiveCall(info: call.info, peer: call.device, answeredBy: call.device,
                                        answeredAt: now, media: .awaitingConnect), now: now)
    }
}
