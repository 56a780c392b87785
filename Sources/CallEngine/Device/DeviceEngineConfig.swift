import IPCWire

/// Everything the device role needs from its profile. Durations are milliseconds.
public struct DeviceEngineConfig: Sendable, Equatable {
    public var devId: String
    /// `extra.channelType` values this device takes (PROTOCOL.md 3.4).
    public var supportedChannelTypes: Set<ChannelType>
    /// What the device does when a valid call rings (PROTOCOL.md 3.1.3).
    public var answerPolicy: AnswerPolicy
    /// App user ids to call on a press with no named target, in order (PROTOCOL.md 3.2.1).
    public var household: [String]
    /// Call type of a press that names none.
    public var defaultCallType: CallType
    /// How long an outgoing call rings when the press names no timeout.
    public var defaultCallTimeoutMs: Int64
    /// Informational on the device (the app drives heartbeats, PROTOCOL.md 3.3).
    public var heartbeatIntervalMs: Int64
    /// PROTOCOL.md 3.3: no heartbeat from the app for this long ends the call.
    public var heartbeatTimeoutMs: Int64
    /// PROTOCOL.md 3.3: the P2P link must be up this long after `answer`.
    public var connectTimeoutMs: Int64
    /// PROTOCOL.md 3.3: a lost P2P link may come back within this long.
    public var mediaLostGraceMs: Int64
    /// `extra.category` of the calls the device makes.
    public var category: String
    /// `extra.channelType` of the calls the device makes.
    public var outgoingChannelType: ChannelType

    public init(devId: String,
                supportedChannelTypes: Set<ChannelType> = Set(ChannelType.allCases),
                answerPolicy: AnswerPolicy = .manual,
                household: [String] = [],
                defaultCallType: CallType = .oneToOne,
                defaultCallTimeoutMs: Int64 = 30_000,
                heartbeatIntervalMs: Int64 = 10_000,
                heartbeatTimeoutMs: Int64 = 30_000,
                connectTimeoutMs: Int64 = 20_000,
                mediaLostGraceMs: Int64 = 5_000,
                category: String = "sp_dpsxj",
                outgoingChannelType: ChannelType = .audioVideo) {
        self.devId = devId
        self.supportedChannelTypes = supportedChannelTypes
        self.answerPolicy = answerPolicy
        self.household = household
        self.defaultCallType = defaultCallType
        self.defaultCallTimeoutMs = defaultCallTimeoutMs
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.connectTimeoutMs = connectTimeoutMs
        self.mediaLostGraceMs = mediaLostGraceMs
        self.category = category
        self.outgoingChannelType = outgoingChannelType
    }
}
