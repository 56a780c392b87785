import IPCWire

extension AppCallEngine {
    /// PROTOCOL.md 3.3: the device's reply to our heartbeat restarts the reply watchdog. The app
    /// never answers a heartbeat (no echo).
    mutating func receiveHeartbeat(_ message: CallMessage, now: Int64) -> [CallEffect] {
        guard case .answered(let call) = state else { return unexpected(message) }
        return [timers.arm(CallTimer(.heartbeatWatchdog, sessionId: call.info.sessionId),
                           at: now.addingSaturating(config.heartbeatTimeoutMs))]
    }
}
