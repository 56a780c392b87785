import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.1.4: "App -> device cancel before that stops the ringing (no reply)."
    mutating func receiveCancel(_ message: CallMessage, now: Int64) -> [CallEffect] {
        switch state {
        case .ringingIncoming:
            return end(.remote(.cancelled, message: message), now: now)
        case .answered(let call) where call.info.direction == .incoming:
            // [ours] The cancel crossed our answer: the caller has gone, so the call ends (no reply).
            return end(.remote(.cancelled, message: message), now: now)
        case .idle, .shutDown, .ringingOutgoing, .answered:
            return unexpected(message)
        }
    }

    /// PROTOCOL.md 3.1.4: "App -> device timeout (the caller gave up at its deadline) does the same
    /// and the session ends with reason timeout." The device never sends `timeout` itself.
    mutating func receiveTimeout(_ message: CallMessage, now: Int64) -> [CallEffect] {
        let ending = Ending(.notAnswered, by: .remote, reason: .timeout, remoteReason: message.reason)
        switch state {
        case .ringingIncoming:
            return end(ending, now: now)
        case .answered(let call) where call.info.direction == .incoming:
            // [ours] The timeout crossed our answer: the caller has given up, so the call ends.
            return end(ending, now: now)
        case .idle, .shutDown, .ringingOutgoing, .answered:
            return unexpected(message)
        }
    }
}
