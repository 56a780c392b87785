import IPCWire

extension DoorbellCallEngine {
    /// The current call as it ends (see `end`): a connected call closes its link; a ringing one
    /// rings at the apps, not here.
    func closingCall(_ ending: Ending, now: Int64) -> ClosingCall? {
        switch state {
        case .idle, .messageWindow, .shutDown:
            return nil
        case .ringing(let ring):
            return ClosingCall(sessionId: ring.callId,
                               record: record(callId: ring.callId, startedAt: ring.startedAt, answeredBy: nil,
                                              answeredAt: nil, ending, now: now))
        case .connected(let call):
            return ClosingCall(sessionId: call.callId, closesLink: true,
                               record: record(callId: call.callId, startedAt: call.startedAt, answeredBy: call.peer,
                                              answeredAt: call.answeredAt, ending, now: now))
        }
    }

    /// With no call on, an ending still closes the message window's timer (8.5).
    mutating func endWithoutCall() -> [CallEffect] { timers.cancelAll() }

    /// PROTOCOL.md 8.2: the ring ends without an accept (the ring timeout, or every household user
    /// declined): device -> out topic `timeout` (no `uid`: it concerns everyone), `.ringTimedOut`
    /// for the glue's DP 212 `ipc_doorbell` (8.5), the record; then, if messages are on, 8.5's
    /// window opens: "a press within doorbell.messageWindow (default 15 s, counted from the
    /// timeout) records a message".
    mutating func ringEndsUnanswered(_ ring: DoorbellRing, _ ending: Ending, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [outgoing(.timeout, callId: ring.callId), .ringTimedOut(callId: ring.callId)]
        effects += end(ending, now: now)
        if config.messagesEnabled {
            let closesAt = now.addingSaturating(max(0, config.messageWindowMs))
            state = .messageWindow(DoorbellMessageWindow(callId: ring.callId, closesAt: closesAt))
            effects.append(timers.arm(messageWindowTimer, at: closesAt))
        }
        return effects
    }

    /// 8.5's window timer. Keyed by the devId, not the missed call: the call has ended, and no
    /// timer of a call outlives it.
    var messageWindowTimer: CallTimer { CallTimer(.messageWindow, sessionId: devId) }

    /// The connected call ends with `stop` `reason` to the accepting user (8.2, §3.3).
    mutating func stopConnected(_ call: DoorbellCall, reason: StopReason?, now: Int64) -> [CallEffect] {
        var effects: [CallEffect] = [outgoing(.stop, callId: call.callId, uid: call.peer, reason: reason)]
        effects += end(Ending(reason == nil ? .hungUp : .stopped, by: .local, reason: reason), now: now)
        return effects
    }

    /// The record of call `callId` ending with `ending` at `now`: an outgoing call of type 3 to the
    /// household (see `DoorbellCallEngine`).
    func record(callId: String, startedAt: Int64, answeredBy: String?, answeredAt: Int64?, _ ending: Ending,
                now: Int64) -> CallRecord {
        CallRecord(sessionId: callId, role: .device, direction: .outgoing, localId: devId, peers: config.members,
                   answeredBy: answeredBy, callType: .oneToMoreSpecial, startedAt: startedAt, answeredAt: answeredAt,
                   endedAt: now, outcome: ending.outcome, endedBy: ending.endedBy, reason: ending.reason,
                   remoteReason: ending.remoteReason, sdkError: nil)
    }
}
