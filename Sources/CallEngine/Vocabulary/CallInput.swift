import IPCWire

/// Everything that can happen to a call engine (both roles share this vocabulary). Time is not part
/// of the input: every `handle` call takes `now` (unix milliseconds) beside it.
public enum CallInput: Sendable, Equatable {
    /// A decoded 308 call event arrived (PROTOCOL.md 3). Transport-level refusals (bad JSON, unknown
    /// event, payload too large) never reach the engine: they are the glue's to log and drop.
    case received(CallMessage)
    /// A timer the engine armed with `CallEffect.armTimer` is due.
    case timerFired(CallTimer)
    /// The operator, the control API, or the SDK user did something.
    case local(LocalAction)
    /// The P2P media link of a session came up (or came back).
    case mediaLinkUp(sessionId: String)
    /// The P2P media link of a session was lost (PROTOCOL.md 4: ICE failed/disconnected, DTLS
    /// closed, or nothing from the peer for 5 s).
    case mediaLinkDown(sessionId: String)
    /// The process is stopping (SIGTERM, PROTOCOL.md 3.3).
    case shutdown
    /// A decoded 308 `video_doorbell` message arrived (PROTOCOL.md 8.2). The doorbell engines take
    /// it; the §3 device engine answers it with `stop` `invalid_params`; the §3 app engine ignores it.
    case receivedDoorbell(VideoDoorbellMessage)
    /// App role: a 43 press arrived from a device (PROTOCOL.md 8.1); `AppDoorbellEngine` rings.
    /// The device engines and the §3 app engine ignore it.
    case doorbellPressed(DoorbellPressMessage)
}

/// What a local user may do. Some actions belong to one role only; the other role refuses them
/// with `CallActionError.notInThisRole`.
public enum LocalAction: Sendable, Equatable {
    /// Device: the doorbell button (PROTOCOL.md 3.2).
    case press(DoorbellPress)
    /// App: `ThingSmartCallChannel.startCall` (PROTOCOL.md 3.1).
    case startCall(StartCall)
    /// Answer the incoming call that is ringing.
    case answer
    /// Reject the incoming call that is ringing.
    case reject
    /// Refuse the incoming call that is ringing with `busy`.
    case busy
    /// Cancel the outgoing call before it is answered.
    case cancel
    /// End the answered call. The app role also accepts it before an answer (it then cancels its
    /// own call or rejects the incoming one, as the SDK's hang-up does).
    case hangUp
    /// Device fault injection: while on, every valid incoming call gets `busy` as if the device were
    /// in another session.
    case setActingBusy(Bool)
    /// Change the answer policy for the calls that arrive from now on.
    case setAnswerPolicy(AnswerPolicy)
}

/// A doorbell press (PROTOCOL.md 3.2.1).
public struct DoorbellPress: Sendable, Equatable {
    /// The session id, made by the caller (see `makeSessionId(devId:using:)`): the engine has no
    /// randomness of its own.
    public var sessionId: String
    /// Who to call; empty means the household from the configuration.
    public var targets: [String]
    /// nil means the configured default call type.
    public var callType: CallType?
    /// How long the call may ring, in milliseconds; nil means the configured default.
    public var timeoutMs: Int64?

    public init(sessionId: String, targets: [String] = [], callType: CallType? = nil, timeoutMs: Int64? = nil) {
        self.sessionId = sessionId
        self.targets = targets
        self.callType = callType
        self.timeoutMs = timeoutMs
    }
}

/// The SDK's `startCall` (app role): calls one device.
public struct StartCall: Sendable, Equatable {
    /// The device to call (`targetId` on the wire).
    public var targetId: String
    /// Chosen by the caller (PROTOCOL.md 3).
    public var sessionId: String
    /// The SDK takes seconds; the wire carries `now + timeoutSeconds * 1000` as the deadline.
    public var timeoutSeconds: Int64
    public var callType: CallType
    public var extra: CallExtra

    public init(targetId: String, sessionId: String, timeoutSeconds: Int64 = 30,
                callType: CallType = .oneToOne, extra: CallExtra = CallExtra()) {
        self.targetId = targetId
        self.sessionId = sessionId
        self.timeoutSeconds = timeoutSeconds
        self.callType = callType
        self.extra = extra
    }
}
