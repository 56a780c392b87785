import IPCWire

/// Everything the app role (the SDK's ThingSmartCallChannel) needs. Durations are milliseconds.
public struct AppEngineConfig: Sendable, Equatable {
    /// This app's user id (`curId` of what it sends).
    public var userId: String
    /// PROTOCOL.md 3.3: the app sends a heartbeat this often once answered.
    public var heartbeatIntervalMs: Int64
    /// PROTOCOL.md 3.3: no heartbeat reply for this long ends the call with -2532.
    public var heartbeatTimeoutMs: Int64
    /// How long past a call's deadline the app waits for the device's `not_answered` before giving
    /// up itself (outgoing: sends `timeout`; incoming: stops ringing). Ends with -2530.
    public var deadlineGraceMs: Int64
    /// What the app does with a call from a device (listen mode): auto answer / reject / busy /
    /// ignore, or `.manual` (the default: wait for `LocalAction.answer` and friends).
    public var incomingPolicy: AnswerPolicy
    /// Send `ring` at once when a device's call arrives (PROTOCOL.md 3.2.2: optional).
    public var ringsOnIncomingCall: Bool
    /// Answer events of unknown sessions with `stop` `undefined_session` (never a `stop`).
    public var answersUnknownSessions: Bool
    /// `extra.channelType` values this app takes on incoming calls.
    public var supportedChannelTypes: Set<ChannelType>
    /// `appDeviceId` to put on the calls it makes (the phone's id), if any.
    public var appDeviceId: String?

    public init(userId: String,
                heartbeatIntervalMs: Int64 = 10_000,
                heartbeatTimeoutMs: Int64 = 30_000,
                deadlineGraceMs: Int64 = 2_000,
                incomingPolicy: AnswerPolicy = .manual,
                ringsOnIncomingCall: Bool = true,
                answersUnknownSessions: Bool = true,
                supportedChannelTypes: Set<ChannelType> = Set(ChannelType.allCases),
                appDeviceId: String? = nil) {
        self.userId = userId
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.deadlineGraceMs = deadlineGraceMs
        self.incomingPolicy = incomingPolicy
        self.ringsOnIncomingCall = ringsOnIncomingCall
        self.answersUnknownSessions = answersUnknownSessions
        self.supportedChannelTypes = supportedChannelTypes
        self.appDeviceId = appDeviceId
    }
}
