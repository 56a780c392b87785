import IPCWire

extension AppCallEngine {
    /// PROTOCOL.md 3.4, mirrored by the app: an event for a session it does not have may be
    /// answered with `stop` `undefined_session` (if configured), never a `stop`.
    func refuseUndefinedSession(_ message: CallMessage, why: Refusal) -> [CallEffect] {
        guard message.event != .stop, config.answersUnknownSessions else { return [.refused(message, why)] }
        return [.refused(message, why),
                .send(message.reply(.stop, from: userId, reason: .undefinedSession))]
    }

    func unexpected(_ message: CallMessage) -> [CallEffect] {
        [.refused(message, .unexpected(event: message.event, phase: phase))]
    }
}
