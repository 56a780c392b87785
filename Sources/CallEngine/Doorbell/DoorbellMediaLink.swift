import IPCWire

extension DoorbellCallEngine {
    /// The P2P link of the connected call came up (or came back): `connectTimeout` or the lost-link
    /// grace stops (PROTOCOL.md 8.2, as §3.3). A link for another session changes nothing.
    public mutating func mediaLinkUp(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .connected(var call) = state, call.callId == sessionId else { return [] }
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
        state = .connected(call)
        return effects
    }

    /// The P2P link of the connected call was lost: PROTOCOL.md 8.2, "link lost for 5 s: stop
    /// disconnected". Before it was ever up, `connectTimeout` keeps running instead.
    public mutating func mediaLinkDown(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .connected(var call) = state, call.callId == sessionId else { return [] }
        switch call.media {
        case .up:
            call.media = .lost(since: now)
            state = .connected(call)
            return [timers.arm(CallTimer(.mediaLost, sessionId: sessionId), at: now.addingSaturating(config.mediaLostGraceMs))]
        case .awaitingConnect, .lost:
            return []
        }
    }
}
