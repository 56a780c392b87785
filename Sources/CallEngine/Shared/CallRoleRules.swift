import IPCWire

/// What the §3 rules both roles share need from a role. `DeviceCallEngine` and `AppCallEngine` conform;
/// the rules themselves live in the extensions of `IncomingCallRules.swift` and
/// `SharedRefusals.swift`, written once. Each role keeps only what is its own (the device's outgoing
/// ring at several targets, the app's SDK error codes and heartbeats).
protocol CallRoleRules: CallRoleEngine where State: SessionRoleState {
    /// `devId` (device) or `userId` (app): the `curId` of everything this role sends.
    var localId: String { get }
    var role: CallRole { get }
    /// Where the roles' incoming-call rules differ.
    var incomingRules: IncomingCallConfig { get }
    /// The targets its own call still rings (device: those left; app: the device), or none.
    var ringingTargets: [String] { get }

    /// The role's own timers once a call is answered (device: connect timeout and heartbeat
    /// watchdog; app: heartbeats), in the order they are armed.
    func answeredTimers(sessionId: String, now: Int64) -> [(CallTimer, at: Int64)]
}

/// The states of the §3 roles (`DeviceState`, `AppState`) as their shared rules see them.
protocol SessionRoleState: CallRoleState {
    /// The session, if any.
    var info: SessionInfo? { get }
    /// The incoming call that rings, if one does.
    var ringingIncomingCall: IncomingRing? { get }
    /// The answered call (either direction), if any.
    var answeredCall: ActiveCall? { get }
    static func ringingIncoming(_ ring: IncomingRing) -> Self
    static func answered(_ call: ActiveCall) -> Self
}

extension CallRoleRules {
    /// The session this role has, if any.
    var sessionInfo: SessionInfo? { state.info }
    /// The incoming call that rings, if one does.
    var ringingIncoming: IncomingRing? { state.ringingIncomingCall }
    /// The answered call (either direction), if any.
    var answeredSession: ActiveCall? { state.answeredCall }
    /// True once the engine has shut down.
    var isShutDown: Bool { state.phase == .shutDown }

    /// Enters the ringing-incoming state with `ring` (nothing else).
    mutating func enterRinging(_ ring: IncomingRing) { state = .ringingIncoming(ring) }

    /// Ends the current session and returns to idle (see `end`).
    mutating func endSession(_ ending: Ending, now: Int64) -> [CallEffect] { end(ending, now: now) }

    /// The current session as it ends: an incoming call that rings stops ringing, an answered one
    /// closes its link; the record names who answered.
    func closingCall(_ ending: Ending, now: Int64) -> ClosingCall? {
        if let call = answeredSession {
            return ClosingCall(sessionId: call.info.sessionId, closesLink: true,
                               record: call.info.record(role: role, localId: localId, answeredBy: call.answeredBy,
                                                        answeredAt: call.answeredAt, ending, now: now))
        }
        guard let info = sessionInfo else { return nil }
        return ClosingCall(sessionId: info.sessionId, stopsRinging: ringingIncoming != nil,
                           record: info.record(role: role, localId: localId, answeredBy: nil, answeredAt: nil, ending, now: now))
    }

    /// PROTOCOL.md 3.3: "an answered call gets hang_up, an incoming call still ringing gets reject,
    /// an outgoing call still ringing gets cancel to every target; each with reason shutdown" (the
    /// app mirrors the device).
    func farewell() -> Farewell? {
        if let call = answeredSession {
            return Farewell(messages: [.send(.outgoing(.hangUp, from: localId, to: call.peer, session: call.info.sessionId,
                                                       reason: .shutdown))],
                            ending: Ending(.hungUp, by: .local, reason: .shutdown))
        }
        if let ring = ringingIncoming {
            return Farewell(messages: [.send(.outgoing(.reject, from: localId, to: ring.caller, session: ring.info.sessionId,
                                                       reason: .shutdown))],
                            ending: Ending(.rejected, by: .local, reason: .shutdown))
        }
        guard let info = sessionInfo else { return nil }
        return Farewell(messages: ringingTargets.map {
            .send(.outgoing(.cancel, from: localId, to: $0, session: info.sessionId, reason: .shutdown))
        }, ending: Ending(.cancelled, by: .local, reason: .shutdown))
    }

    /// The answered call's link.
    var linkedMedia: (sessionId: String, media: MediaLinkState)? {
        answeredSession.map { ($0.info.sessionId, $0.media) }
    }

    mutating func setLinkedMedia(_ media: MediaLinkState) {
        guard var call = answeredSession else { return }
        call.media = media
        state = .answered(call)
    }
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
