import IPCWire

extension DoorbellCallEngine {
    /// PROTOCOL.md 8.2: "heartbeat (from the user who accepted, every heartbeatInterval ...)" and
    /// the device's "heartbeat (one reply per heartbeat, as §3.3)": each one restarts the
    /// `heartbeatTimeout` watchdog. From anyone else, or before an accept: nothing.
    mutating func receiveHeartbeat(_ message: VideoDoorbellMessage, from uid: String, now: Int64) -> [CallEffect] {
        guard case .connected(let call) = state, call.peer == uid else { return unexpected(message) }
        return [outgoing(.heartbeat, callId: call.callId, uid: uid),
                timers.arm(CallTimer(.heartbeatWatchdog, sessionId: call.callId),
                           at: now.addingSaturating(config.heartbeatTimeoutMs))]
    }
}
