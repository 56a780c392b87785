import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 3.3: "the device answers each one with one heartbeat and never sends one on its
    /// own". Each heartbeat of an answered call restarts the `heartbeatTimeout` watchdog.
    mutating func receiveHeartbeat(_ message: CallMessage, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [.send(message.reply(.heartbeat, from: devId))]
        if case .answered(let call) = state {
            effects.append(timers.arm(CallTimer(.heartbeatWatchdog, sessionId: call.info.sessionId),
                                      at: now.addingSaturating(config.heartbeatTimeoutMs)))
        }
        return effects
    }
}
