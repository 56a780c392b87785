import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.2.3: a target rejects the device's call; what follows depends on the call type.
    mutating func receiveReject(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(var ring) = state else { return unexpected(message) }
        let ending = Ending(.rejected, by: .remote, reason: .rejected, remoteReason: message.reason)
        switch ring.info.callType {
        case .oneToOne:
            // "One-to-one: reject or busy ends the call."
            return end(ending, now: now)
        case .oneToMore:
            // "A reject from any target ends the call: the device sends already_rejected to every
            // other target."
            let s = ring.info.sessionId
            var effects: [CallEffect] = ring.remaining
                .filter { $0 != message.curId }
                .map { .send(.outgoing(.alreadyRejected, from: devId, to: $0, session: s, reason: .rejected)) }
            effects += end(ending, now: now)
            return effects
        case .oneToMoreSpecial:
            // "A reject removes only that target; when every target has rejected or is busy, the
            // call ends as rejected."
            let noneLeft = ring.remove(message.curId, busy: false)
            state = .ringingOutgoing(ring)
            return noneLeft ? end(ring.emptyEnding, now: now) : []
        }
    }

    /// PROTOCOL.md 3.2.3: "busy from a target removes only that target; when no target is left the
    /// call ends (reason busy if every target was busy, else rejected)." Same for every call type.
    mutating func receiveBusy(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .ringingOutgoing(var ring) = state else { return unexpected(message) }
        let noneLeft = ring.remove(message.curId, busy: true)
        state = .ringingOutgoing(ring)
        return noneLeft ? end(ring.emptyEnding, now: now) : []
    }
}
