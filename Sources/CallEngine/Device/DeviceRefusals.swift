import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.4: answer an event for a session the device does not have (or from a user not
    /// in it) with `stop` `undefined_session`, and change nothing. Never answer a `stop` with a
    /// `stop` (two sides that both do would ping-pong forever).
    func refuseUndefinedSession(_ message: CallMessage, why: Refusal) -> [CallEffect] {
        guard message.event != .stop else { return [.refused(message, why)] }
        return [.refused(message, why),
                .send(message.reply(.stop, from: devId, reason: .undefinedSession))]
    }

    /// An event from a session member that makes no sense in this phase: logged, nothing changes.
    func unexpected(_ message: CallMessage) -> [CallEffect] {
        [.refused(message, .unexpected(event: message.event, phase: phase))]
    }
}
