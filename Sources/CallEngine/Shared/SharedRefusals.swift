import IPCWire

/// The refusals both roles make the same way (PROTOCOL.md 3.4; the app mirrors the device).
extension CallRoleRules {
    /// What is refused before any routing: everything after shutdown, and (3.4) "Without curId or
    /// sessionId there is no one to answer: dropped." Nil when the message goes on.
    func refusalBeforeRouting(_ message: CallMessage) -> [CallEffect]? {
        if isShutDown { return [.refused(message, .shutDown)] }
        guard !message.curId.isEmpty, !message.sessionId.isEmpty else { return [.refused(message, .anonymous)] }
        return nil
    }

    /// 3.4: an event for a session this role does not have (or from a user not in it) gets `stop`
    /// `undefined_session` (the app only if configured), and nothing changes. Never a `stop` for a
    /// `stop` (two sides that both did would ping-pong forever).
    func refuseUndefinedSession(_ message: CallMessage, why: Refusal) -> [CallEffect] {
        guard message.event != .stop, incomingRules.answersUnknownSessions else { return [.refused(message, why)] }
        return [.refused(message, why),
                .send(message.reply(.stop, from: localId, reason: .undefinedSession))]
    }

    /// An event from a session member that makes no sense in this phase: logged, nothing changes.
    func unexpected(_ message: CallMessage) -> [CallEffect] {
        [.refused(message, .unexpected(event: message.event, phase: phase))]
    }
}

extension SessionInfo {
    /// The record of this session ending with `ending` at `now`, as `role` with id `localId`.
    func record(role: CallRole, localId: String, answeredBy: String?, answeredAt: Int64?, _ ending: Ending,
                now: Int64) -> CallRecord {
        CallRecord(sessionId: sessionId, role: role, direction: direction, localId: localId,
                   peers: peers, answeredBy: answeredBy, callType: callType, startedAt: startedAt,
                   answeredAt: answeredAt, endedAt: now, outcome: ending.outcome, endedBy: ending.endedBy,
                   reason: ending.reason, remoteReason: ending.remoteReason, sdkError: ending.sdkError)
    }
}
