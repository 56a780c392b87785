import IPCWire

/// What the glue must do after an input, in order. Both roles share this vocabulary.
public enum CallEffect: Sendable, Equatable {
    /// Publish this 308 event (fully formed: curId, targetId, sessionId, reason are set).
    case send(CallMessage)
    /// Run `timer` and feed `CallInput.timerFired(timer)` back at `at` (unix ms). Arming a timer
    /// that is already armed replaces it.
    case armTimer(CallTimer, at: Int64)
    /// Forget `timer`; if it still fires, the engine ignores it.
    case cancelTimer(CallTimer)
    /// Device: the bell rings for an incoming call. App: the phone rings.
    case startRinging(sessionId: String)
    case stopRinging(sessionId: String)
    /// The peer sent `ring` (device: a target of an outgoing call; app: the called device).
    case peerRinging(sessionId: String, peer: String)
    /// The call was answered: the P2P link (PROTOCOL.md 4) for `sessionId` may now be opened by `peer`
    /// (device role: accept an offer from `peer`; app role: `peer` is the device to offer to).
    case expectMediaLink(sessionId: String, peer: String)
    /// Close the P2P link of `sessionId` (the call ended).
    case closeMediaLink(sessionId: String)
    /// The session ended; the record is for the journal and (app role) the SDK delegate.
    case callEnded(CallRecord)
    /// A message was refused (PROTOCOL.md 3.4) or made no sense in this state: for the log. Any
    /// reply (a `stop`) is a separate `.send` effect.
    case refused(CallMessage, Refusal)
    /// A local action made no sense (only from `handle(.local(...))`; `perform` throws instead).
    case actionRefused(LocalAction, CallActionError)
    /// Publish this 308 `video_doorbell` message (PROTOCOL.md 8.2): device -> out topic, or app ->
    /// the device's in topic.
    case sendDoorbell(VideoDoorbellMessage)
    /// Device, doorbell kinds: a press started call `callId` (PROTOCOL.md 8.1). The glue publishes
    /// the 43 (`edata` = `callId`), the DPs 136/154/185 with the press snapshot (8.1, 8.5) and
    /// the pushes (8.8).
    case announcePress(callId: String)
    /// Device, doorbell kinds: the ring of `callId` ended with the device's `timeout` (no accept
    /// within `doorbell.ringTimeout`, or every household user declined; PROTOCOL.md 8.2). The glue
    /// reports DP 212 `ipc_doorbell` with the press snapshot (8.5). Comes before the `callEnded`.
    case ringTimedOut(callId: String)
    /// Device, doorbell kinds: a press inside the message window after the missed call `callId`
    /// (PROTOCOL.md 8.1, 8.5): the glue records the message (MP4) and reports DP 212 `ipc_leave_msg`.
    case leaveMessage(callId: String)
    /// A `video_doorbell` message was refused or ignored (PROTOCOL.md 8.2): for the log and the
    /// refusal count. Any reply is a separate `.sendDoorbell` effect.
    case refusedDoorbell(VideoDoorbellMessage, Refusal)
}

/// Why a received message was refused or ignored.
public enum Refusal: Sendable, Equatable, CustomStringConvertible {
    /// PROTOCOL.md 3.4: answered with `stop` `invalid_params`. The text says what is wrong.
    case invalidParams(String)
    /// PROTOCOL.md 3.4: a `call` whose deadline has passed; answered with `stop` `expired`.
    case expired(deadline: Int64, now: Int64)
    /// PROTOCOL.md 3.4: no such session here (answered with `stop` `undefined_session`, unless it
    /// was a `stop`).
    case undefinedSession
    /// PROTOCOL.md 3.4: the sender is not in this session (answered like `undefinedSession`).
    case notInSession(userId: String)
    /// The sender was in this session but has left it (busy, rejected, or another target
    /// answered): logged, no reply.
    case leftSession(userId: String)
    /// App role: the message is for another user (a device's out topic carries every target's
    /// messages).
    case notAddressedToUs(targetId: String)
    /// The event makes no sense in the current phase (a duplicate, or a peer's mistake): logged,
    /// nothing changes.
    case unexpected(event: CallEvent, phase: CallPhase)
    /// PROTOCOL.md 3.4: no `curId` or no `sessionId` (empty): there is no one to answer; dropped.
    case anonymous
    /// A `call` for a session this side has already ended (a late duplicate; EndedSessions):
    /// logged, no reply, no ring. App role: any message for a session it has just ended (one
    /// that crossed the ending on the wire): logged, no reply.
    case sessionEnded
    /// The engine has shut down.
    case shutDown
    /// PROTOCOL.md 8.2: a `video_doorbell` message from a user outside the household: nothing.
    case notInHousehold(userId: String)
    /// PROTOCOL.md 8.2: a `video_doorbell` message whose `eData` is not the current call: nothing.
    case notCurrentCall(eData: String)
    /// A `video_doorbell` event that makes no sense in the current phase, or from this sender (a
    /// heartbeat from a user who did not accept, an event only a device sends): nothing changes.
    case unexpectedDoorbell(event: DoorbellEvent, phase: CallPhase)
    /// PROTOCOL.md 8.2: a message of the other call kind (a `video_doorbell` message for a
    /// `screen_ipc` device, or a §3 `rtc` event for a doorbell): answered with `stop`
    /// `invalid_params` where there is someone to answer.
    case wrongCallKind(String)

    public var description: String {
        switch self {
        case .invalidParams(let why): "invalid params: \(why)"
        case .expired(let deadline, let now): "expired: deadline \(deadline) is \(now.subtractingSaturating(deadline)) ms past"
        case .undefinedSession: "undefined session"
        case .notInSession(let user): "user '\(user)' is not in this session"
        case .leftSession(let user): "user '\(user)' has left this session"
        case .notAddressedToUs(let target): "addressed to '\(target)', not to us"
        case .unexpected(let event, let phase): "'\(event.rawValue)' makes no sense while \(phase.rawValue)"
        case .anonymous: "no curId or sessionId: no one to answer"
        case .sessionEnded: "a message for a session that has already ended here (late, or a duplicate)"
        case .shutDown: "shut down"
        case .notInHousehold(let user): "user '\(user)' is not in the household"
        case .notCurrentCall(let eData): "'\(eData)' is not the current doorbell call"
        case .unexpectedDoorbell(let event, let phase): "doorbell '\(event.rawValue)' makes no sense while \(phase.rawValue)"
        case .wrongCallKind(let why): "wrong call kind: \(why)"
        }
    }
}
