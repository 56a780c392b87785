import IPCWire

extension DoorbellCallEngine {
    /// PROTOCOL.md 8.2: `accept` from a household user for the current call.
    mutating func receiveAccept(_ message: VideoDoorbellMessage, from uid: String, now: Int64) -> [CallEffect] {
        switch state {
        case .ringing(let ring):
            // 8.2: "accept (answer: this user may now open the §4 link with sessionid = the call id,
            // and the other users are told)": device -> out topic `answered` naming the user; the
            // ring timeout goes; connectTimeout and the heartbeat watchdog start (§3.3). A user who
            // declined earlier may still accept **[ours]**.
            let call = DoorbellCall(callId: ring.callId, peer: uid, startedAt: ring.startedAt,
                                    deadline: ring.deadline, answeredAt: now, media: .awaitingConnect)
            var effects: [CallEffect] = [
                outgoing(.answered, callId: ring.callId, uid: uid),
                .expectMediaLink(sessionId: ring.callId, peer: uid),
            ]
            effects += timers.cancelAll()
            effects.append(timers.arm(CallTimer(.connectTimeout, sessionId: ring.callId),
                                      at: now.addingSaturating(config.connectTimeoutMs)))
            effects.append(timers.arm(CallTimer(.heartbeatWatchdog, sessionId: ring.callId),
                                      at: now.addingSaturating(config.heartbeatTimeoutMs)))
            state = .connected(call)
            return effects

        case .connected(let call) where call.peer == uid:
            // [ours] The accepting user's accept again (MQTT redelivers): the device sends its
            // `answered` again; nothing else changes (as §3.1.2's repeated call).
            return [outgoing(.answered, callId: call.callId, uid: uid)]

        case .connected(let call):
            // 8.2: "A second accept after the first gets stop with reason answered_by_other to that
            // user only." The call goes on untouched.
            return [.refusedDoorbell(message, .unexpectedDoorbell(event: .accept, phase: .answered)),
                    outgoing(.stop, callId: call.callId, uid: uid, reason: .answeredByOther)]

        case .idle, .messageWindow, .shutDown:
            // `receive` has already refused a message for no current call.
            return unexpected(message)
        }
    }
}
