import IPCWire

/// What the rules both roles share need from a role. `DeviceCallEngine` and `AppCallEngine` conform;
/// the rules themselves live in the extensions of `IncomingCallRules.swift` and
/// `SharedRefusals.swift`, written once. Each role keeps only what is its own (the device's outgoing
/// ring at several targets, the app's SDK error codes and heartbeats).
protocol CallRoleRules {
    /// `devId` (device) or `userId` (app): the `curId` of everything this role sends.
    var localId: String { get }
    var role: CallRole { get }
    var phase: CallPhase { get }
    var timers: ArmedTimers { get set }
    /// Where the roles' incoming-call rules differ.
    var incomingRules: IncomingCallConfig { get }
    /// The session this role has, if any.
    var sessionInfo: SessionInfo? { get }
    /// The incoming call that rings, if one does.
    var ringingIncoming: IncomingRing? { get }
    /// The answered call (either direction), if any.
    var answeredSession: ActiveCall? { get }
    /// True once the engine has shut down.
    var isShutDown: Bool { get }

    /// Enters the ringing-incoming state with `ring` (nothing else).
    mutating func enterRinging(_ ring: IncomingRing)
    /// Enters the answered state: the role's own timers (device: connect timeout and heartbeat
    /// watchdog; app: heartbeats) and `.expectMediaLink`.
    mutating func beginAnswered(_ call: ActiveCall, now: Int64) -> [CallEffect]
    /// Ends the current session and returns to idle (see each role's `end`).
    mutating func endSession(_ ending: Ending, now: Int64) -> [CallEffect]
}

/// Where the device and app differ in the incoming-call rules.
struct IncomingCallConfig: Sendable {
    /// `extra.channelType` values taken (PROTOCOL.md 3.4).
    var supportedChannelTypes: Set<ChannelType>
    /// What a valid call that rings gets (device 3.1.3; app listen mode 3.2.2).
    var policy: AnswerPolicy
    /// Reply `ring` to a call (the device always; the app optionally, 3.2.2).
    var ringsBack: Bool
    /// The incoming call's deadline timer fires this long after the deadline (device 0: it sends
    /// `not_answered` itself; app: a grace for the device's `not_answered`).
    var deadlineGraceMs: Int64
    /// Every valid call gets `busy` as if in another session (device fault injection).
    var actsBusy: Bool
    /// An event for a session this role does not have gets `stop` `undefined_session` (3.4).
    var answersUnknownSessions: Bool
}
