import IPCWire

/// Everything the app side of a doorbell call (PROTOCOL.md 8.1, 8.2) needs. Durations are
/// milliseconds.
public struct AppDoorbellConfig: Sendable, Equatable {
    /// This app's user id (`uid` of what it sends).
    public var userId: String
    /// The doorbells of this user's household; a 43 from any other device is ignored. Empty: any
    /// device whose out topic the app reads.
    public var devices: Set<String>
    /// PROTOCOL.md 8.2: once accepted, the app sends a heartbeat this often (default 10 s, §3.3).
    public var heartbeatIntervalMs: Int64
    /// PROTOCOL.md 8.2, 3.3: no heartbeat reply for this long ends the call with -2532.
    public var heartbeatTimeoutMs: Int64
    /// The device's `doorbell.ringTimeout` (default 25 s): the app waits this long plus
    /// `ringGraceMs` for the device's `timeout` (or its `answered`) before giving up itself (-2530).
    public var ringTimeoutMs: Int64
    public var ringGraceMs: Int64
    /// What the app does when a doorbell rings: `.manual` (wait for `LocalAction.answer`,
    /// `.reject`, `.hangUp`), `answerAfter` (accept), `reject`/`rejectAfter`/`busy` (decline),
    /// `ignore` (let it ring).
    public var policy: AnswerPolicy

    public init(userId: String,
                devices: Set<String> = [],
                heartbeatIntervalMs: Int64 = 10_000,
                heartbeatTimeoutMs: Int64 = 30_000,
                ringTimeoutMs: Int64 = 25_000,
                ringGraceMs: Int64 = 2_000,
                policy: AnswerPolicy = .manual) {
        self.userId = userId
        self.devices = devices
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.ringTimeoutMs = ringTimeoutMs
        self.ringGraceMs = ringGraceMs
        self.policy = policy
    }
}
