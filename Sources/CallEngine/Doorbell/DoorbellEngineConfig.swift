import IPCWire

/// Everything the doorbell call machine (PROTOCOL.md 8.1, 8.2, 8.5) needs from the profile.
/// Durations are milliseconds. The lead's glue maps the profile's `doorbell.*` onto it.
public struct DoorbellEngineConfig: Sendable, Equatable {
    public var devId: String
    /// The doorbell kind, the 43's `etype` (`ac_doorbell` or `doorbell`, PROTOCOL.md 8.1).
    public var kind: String
    /// The app users of the household (PROTOCOL.md 8.2): only they may accept, decline, hang up or
    /// send heartbeats; a message from anyone else gets nothing.
    public var household: [String]
    /// PROTOCOL.md 8.2: no `accept` within `doorbell.ringTimeout` (default 25 s): `timeout`.
    public var ringTimeoutMs: Int64
    /// PROTOCOL.md 8.2, 3.3: no heartbeat from the accepting user for this long: `stop`
    /// `heartbeat_timeout` (default 30 s).
    public var heartbeatTimeoutMs: Int64
    /// PROTOCOL.md 8.2, 3.3: the P2P link must be up this long after the accept: else `stop`
    /// `connect_failed` (default 20 s).
    public var connectTimeoutMs: Int64
    /// PROTOCOL.md 8.2, 3.3: a lost link may come back within this long: else `stop` `disconnected`.
    public var mediaLostGraceMs: Int64
    /// PROTOCOL.md 8.5: `doorbell.messages`: after a ring timeout a press leaves a message.
    public var messagesEnabled: Bool
    /// PROTOCOL.md 8.5: `doorbell.messageWindow` (default 15 s, counted from the `timeout`).
    public var messageWindowMs: Int64

    public init(devId: String,
                kind: String = "ac_doorbell",
                household: [String] = [],
                ringTimeoutMs: Int64 = 25_000,
                heartbeatTimeoutMs: Int64 = 30_000,
                connectTimeoutMs: Int64 = 20_000,
                mediaLostGraceMs: Int64 = 5_000,
                messagesEnabled: Bool = false,
                messageWindowMs: Int64 = 15_000) {
        self.devId = devId
        self.kind = kind
        self.household = household
        self.ringTimeoutMs = ringTimeoutMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.connectTimeoutMs = connectTimeoutMs
        self.mediaLostGraceMs = mediaLostGraceMs
        self.messagesEnabled = messagesEnabled
        self.messageWindowMs = messageWindowMs
    }

    /// The household as rung: in order, each user once, without empty ids or the device itself.
    var members: [String] {
        var out: [String] = []
        for user in household where !user.isEmpty && user != devId && !out.contains(user) { out.append(user) }
        return out
    }
}
