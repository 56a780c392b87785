import IPCWire

extension DoorbellCallEngine {
    /// A timer the engine armed is due. A timer that is no longer armed (cancelled, replaced, or of
    /// an ended call) is stale and changes nothing.
    public mutating func timerFired(_ timer: CallTimer, now: Int64) -> [CallEffect] {
        guard timers.take(timer) else { return [] }
        switch (timer.kind, state) {
        case (.ringTimeout, .ringing(let ring)) where ring.callId == timer.sessionId:
            // 8.2: "timeout (no accept within doorbell.ringTimeout, default 25 s: the SDK's
            // 'cancelled, timed out')"; 8.5: DP 212 and the message window follow.
            return ringEndsUnanswered(ring, Ending(.notAnswered, by: .local, reason: .timeout), now: now)

        case (.connectTimeout, .connected(let call)) where call.callId == timer.sessionId && call.media == .awaitingConnect:
            // 8.2: "link not up within connectTimeout after the accept: stop connect_failed".
            return stopConnected(call, reason: .connectFailed, now: now)

        case (.mediaLost, .connected(let call)) where call.callId == timer.sessionId:
            // 8.2: "link lost for 5 s: stop disconnected (as §3.3)".
            return stopConnected(call, reason: .disconnected, now: now)

        case (.heartbeatWatchdog, .connected(let call)) where call.callId == timer.sessionId:
            // 8.2: "none for heartbeatTimeout, default 30 s, ends the call with stop heartbeat_timeout".
            return stopConnected(call, reason: .heartbeatTimeout, now: now)

        case (.messageWindow, .messageWindow) where timer == messageWindowTimer:
            // 8.5: the window closes; a press now starts a new call.
            state = .idle
            return []

        case (.ringTimeout, _), (.connectTimeout, _), (.mediaLost, _), (.heartbeatWatchdog, _), (.messageWindow, _),
             // §3 timers and the power machine's are never armed by this engine.
             (.callDeadline, _), (.autoAnswer, _), (.autoReject, _), (.heartbeatSend, _),
             (.sleepAfter, _), (.wakeLatency, _), (.batteryDrain, _):
            return []
        }
    }
}
