import IPCWire

extension CallRoleEngine {
    /// The P2P link of the answered call came up (or came back). A role that enforces the link
    /// timers stops `connectTimeout` or the lost-link grace (PROTOCOL.md 3.3, 8.2); the apps only
    /// record it. A link for another session changes nothing.
    mutating func mediaLinkUp(sessionId: String, now: Int64) -> [CallEffect] {
        guard let link = linkedMedia, link.sessionId == sessionId else { return [] }
        var effects: [CallEffect] = []
        if mediaLostGraceMs != nil {
            switch link.media {
            case .awaitingConnect:
                effects += timers.cancel(CallTimer(.connectTimeout, sessionId: sessionId))
            case .lost:
                effects += timers.cancel(CallTimer(.mediaLost, sessionId: sessionId))
            case .up:
                break
            }
        }
        setLinkedMedia(.up)
        return effects
    }

    /// The P2P link of the answered call was lost: PROTOCOL.md 3.3, "P2P link lost and not back
    /// within 5 s: stop with reason disconnected" (8.2 likewise), for a role that enforces it.
    /// Before it was ever up, `connectTimeout` keeps running instead.
    mutating func mediaLinkDown(sessionId: String, now: Int64) -> [CallEffect] {
        guard let link = linkedMedia, link.sessionId == sessionId, link.media == .up else { return [] }
        setLinkedMedia(.lost(since: now))
        guard let grace = mediaLostGraceMs else { return [] }
        return [timers.arm(CallTimer(.mediaLost, sessionId: sessionId), at: now.addingSaturating(grace))]
    }
}
