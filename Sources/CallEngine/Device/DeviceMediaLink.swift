import IPCWire

extension DeviceCallEngine {
    /// The P2P link of the answered call came up (or came back): `connectTimeout` or the lost-link
    /// grace stops (PROTOCOL.md 3.3). A link for another session changes nothing.
    public mutating func mediaLinkUp(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .answered(var call) = state, call.info.sessionId == sessionId else { return [] }
        var effects: [CallEffect] = []
        switch call.media {
        case .awaitingConnect:
            effects += timers.cancel(CallTimer(.connectTimeout, sessionId: sessionId))
        case .lost:
            effects += timers.cancel(CallTimer(.mediaLost, sessionId: sessionId))
        case .up:
            break
        }
        call.media = .up
        state = .answered(call)
        return effects
    }

    /// The P2P link of the answered call was lost: PROTOCOL.md 3.3, "P2P link lost and not back
    /// within 5 s: stop with reason disconnected". Before it was ever up, `connectTimeout` keeps
    /// running instead.
    public mutating func mediaLinkDown(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .answered(var call) = state, call.info.sessionId == sessionId else { return [] }
        switch call.media {
        case .up:
            call.media = .lost(since: now)
            state = .answered(call)
            return [timers.arm(CallTimer(.mediaLost, sessionId: sessionId), at: now.addingSaturating(config.mediaLostGraceMs))]
        case .awaitingConnect, .lost:
            return []
        }
    }
}
