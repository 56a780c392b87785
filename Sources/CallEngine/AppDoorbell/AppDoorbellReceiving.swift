import IPCWire

extension AppDoorbellEngine {
    /// A `video_doorbell` message on the device's out topic (PROTOCOL.md 8.2). Only messages of the
    /// current call concern us; of those, a `stop` or `heartbeat` naming another user is that
    /// user's. Nothing is ever answered (no echo, never a stop for a stop).
    public mutating func receive(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] {
        if case .shutDown = state { return [.refusedDoorbell(message, .shutDown)] }
        guard let current = state.call, current.callId == message.eData, current.devId == message.devId else {
            return [.refusedDoorbell(message, .notCurrentCall(eData: message.eData))]
        }
        switch message.event {
        case .answered: return receiveAnswered(message, now: now)
        case .timeout:
            // 8.2: "timeout (no accept within doorbell.ringTimeout ...: the SDK's 'cancelled, timed
            // out')": -2530. After our accept was answered the device no longer sends one.
            guard case .answered = state else {
                return end(Ending(.notAnswered, by: .remote, reason: .timeout, remoteReason: message.reason,
                                  sdkError: .timeout), now: now)
            }
            return unexpected(message)
        case .cancel:
            // 8.2: "cancel (the operator cancelled before an accept)": -2523.
            return end(.remote(.cancelled, doorbell: message, sdkError: .cancelled), now: now)
        case .stop:
            return receiveStop(message, now: now)
        case .heartbeat:
            // 8.2, 3.3: the device's reply to our heartbeat restarts the reply watchdog.
            guard case .answered(let call) = state, message.uid == userId else { return unexpected(message) }
            return [timers.arm(CallTimer(.heartbeatWatchdog, sessionId: call.callId),
                               at: now.addingSaturating(config.heartbeatTimeoutMs))]
        case .accept:
            // Another app's message (apps read the in topic only in tests): not ours.
            return unexpected(message)
        }
    }

    /// 8.2: `answered` names the user who accepted: us (the call is ours: link and heartbeats), or
    /// another user ("answered by other", -2522).
    mutating func receiveAnswered(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] {
        switch state {
        case .ringing(let ring), .accepting(let ring):
            guard let uid = message.uid, !uid.isEmpty else { return unexpected(message) }
            if uid == userId { return beginAnswered(ring, now: now) }
            return end(Ending(.answeredElsewhere, by: .remote, remoteReason: message.reason, sdkError: .answeredByOthers,
                              answeredBy: uid), now: now)
        case .answered, .idle, .shutDown:
            // The device's `answered` again (redelivered) changes nothing.
            return unexpected(message)
        }
    }

    /// 8.2: the device's `stop` naming us: `answered_by_other` (our accept came second, -2522), or
    /// the device or its operator ended the call (`reason` as §3.3; none: the operator hung up,
    /// -2513). A `stop` naming another user is theirs.
    mutating func receiveStop(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] {
        if let uid = message.uid, uid != userId { return [.refusedDoorbell(message, .notAddressedToUs(targetId: uid))] }
        if message.reason == StopReason.answeredByOther.rawValue {
            return end(.remote(.answeredElsewhere, doorbell: message, sdkError: .answeredByOthers), now: now)
        }
        if message.reason == nil, case .answered = state {
            return end(.remote(.hungUp, doorbell: message, sdkError: .peerHungUp), now: now)
        }
        return end(.remote(.stopped, doorbell: message, sdkError: .forStop(reason: message.reason)), now: now)
    }

    func unexpected(_ message: VideoDoorbellMessage) -> [CallEffect] {
        [.refusedDoorbell(message, .unexpectedDoorbell(event: message.event, phase: phase))]
    }
}

extension Ending {
    /// The device ended the doorbell call with `message` (a `stop` or `cancel` carries its reason).
    static func remote(_ outcome: CallOutcome, doorbell message: VideoDoorbellMessage, sdkError: SDKError?) -> Ending {
        Ending(outcome, by: .remote, reason: message.reason.flatMap(StopReason.init(rawValue:)),
               remoteReason: message.reason, sdkError: sdkError)
    }
}
