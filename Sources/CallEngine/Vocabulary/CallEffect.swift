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
    /// The engine has shut down.
    case shutDown

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
        case .shutDown: "shut down"
        }
    }
}
