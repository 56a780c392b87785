import IPCWire

extension AppCallEngine {
    /// The app only records the link's state; the device enforces the link timers (PROTOCOL.md 3.3)
    /// and tells the app with `stop`.
    public mutating func mediaLinkUp(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .answered(var call) = state, call.info.sessionId == sessionId else { return [] }
        call.media = .up
        state = .answered(call)
        return []
    }

    public mutating func mediaLinkDown(sessionId: String, now: Int64) -> [CallEffect] {
        guard case .answered(var call) = state, call.info.sessionId == sessionId else { return [] }
        if call.media == .up { call.media = .lost(since: now) }
        state = .answered(call)
        return []
    }
}
