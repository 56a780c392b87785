import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.1.7: "Either side -> hang_up ends the call; the other side does not reply."
    mutating func receiveHangUp(_ message: CallMessage, now: Int64) -> [CallEffect] {
        switch state {
        case .answered:
            return end(.remote(.hungUp, message: message), now: now)
        case .ringingIncoming:
            // [ours] A caller hanging up before the answer is a cancel.
            return end(.remote(.cancelled, message: message), now: now)
        case .ringingOutgoing(var ring):
            // [ours] A target hanging up before answering leaves like a type-3 reject: only it goes.
            let noneLeft = ring.remove(message.curId, busy: false)
            state = .ringingOutgoing(ring)
            return noneLeft ? end(ring.emptyEnding, now: now) : []
        case .idle, .shutDown:
            return unexpected(message)
        }
    }

    /// PROTOCOL.md 3.3: "stop ends the call from either side; reason says why." Never answered
    /// (3.4). [ours] While an outgoing call still rings at several targets, a stop from one of
    /// them ends only that target's leg; the call ends when no target is left.
    mutating func receiveStop(_ message: CallMessage, now: Int64) -> [CallEffect] {
        switch state {
        case .ringingOutgoing(var ring) where ring.remaining.count > 1:
            _ = ring.remove(message.curId, busy: false)
            state = .ringingOutgoing(ring)
            return []
        case .ringingIncoming, .ringingOutgoing, .answered:
            return end(.remote(.stopped, message: message), now: now)
        case .idle, .shutDown:
            return unexpected(message)
        }
    }
}
