import IPCWire

extension DoorbellCallEngine {
    /// A §3 `rtc` event for a doorbell kind. PROTOCOL.md 8.2: "a §3 rtc call for a doorbell kind
    /// gets the §3 stop with reason invalid_params". Any other §3 event names a session a doorbell
    /// never has: §3.4's `stop` `undefined_session` (never for a `stop`). Without `curId` or
    /// `sessionId` there is no one to answer: dropped (§3.4). Nothing changes either way.
    mutating func receive(_ message: CallMessage, now: Int64) -> [CallEffect] {
        if case .shutDown = state { return [.refused(message, .shutDown)] }
        guard !message.curId.isEmpty, !message.sessionId.isEmpty else { return [.refused(message, .anonymous)] }
        let reply = CallMessage(event: .stop, curId: devId, targetId: message.curId, sessionId: message.sessionId,
                                reason: nil)
        switch message.event {
        case .call:
            var stop = reply
            stop.reason = StopReason.invalidParams.rawValue
            return [.refused(message, .wrongCallKind("a §3 call for a doorbell (\(config.kind))")), .send(stop)]
        case .stop:
            return [.refused(message, .undefinedSession)]
        case .cancel, .hangUp, .ring, .answer, .reject, .notAnswered, .busy, .alreadyAnswered, .alreadyRejected,
             .heartbeat, .timeout:
            var stop = reply
            stop.reason = StopReason.undefinedSession.rawValue
            return [.refused(message, .undefinedSession), .send(stop)]
        }
    }
}
