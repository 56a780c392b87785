import IPCWire

/// The device role of the call engine (the doorbell): every rule of PROTOCOL.md section 3 that a
/// device follows, as a sans-IO state machine. Feed it inputs with the current time; do what the
/// returned effects say, in order. It never reads a clock, never sleeps, never does I/O.
///
/// The rules live one file per event kind (`Receiving/Device*`), plus timers, local actions, the
/// media link, shutdown and the session's ending; each cites the PROTOCOL.md section it implements.
public struct DeviceCallEngine: Sendable {
    public internal(set) var config: DeviceEngineConfig
    var state: DeviceState = .idle
    var timers = ArmedTimers()
    var endedSessions = EndedSessions()
    /// Fault injection: answer every valid call with `busy` (see `LocalAction.setActingBusy`).
    public internal(set) var isActingBusy = false

    public init(config: DeviceEngineConfig) {
        self.config = config
    }

    public var role: CallRole { .device }
    var devId: String { config.devId }

    // MARK: Inputs

    /// The one entry point: `route` (Shared/CallRoleEngine.swift) takes `input` to the matching
    /// function below. A refused local action comes back as `.actionRefused`.
    /// A 43 is the device's own announcement (PROTOCOL.md 8.1); a device never takes one.
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] { route(input, now: now) }

    /// A decoded 308 event arrived.
    public mutating func receive(_ message: CallMessage, now: Int64) -> [CallEffect] {
        if let refusal = refusalBeforeRouting(message) { return refusal }
        if message.event == .call { return receiveCall(message, now: now) }

        // 3.4: "An event for a session it does not have, or from a user who is not in that
        // session: stop undefined_session; the session it does have goes on untouched."
        guard let info = state.info, info.sessionId == message.sessionId else {
            return refuseUndefinedSession(message, why: .undefinedSession)
        }
        switch membership(of: message.curId) {
        case .stranger:
            return refuseUndefinedSession(message, why: .notInSession(userId: message.curId))
        case .former:
            return [.refused(message, .leftSession(userId: message.curId))]
        case .peer:
            break
        }

        switch message.event {
        case .call: return receiveCall(message, now: now)
        case .ring: return receiveRing(message, now: now)
        case .answer: return receiveAnswer(message, now: now)
        case .reject: return receiveReject(message, now: now)
        case .busy: return receiveBusy(message, now: now)
        case .cancel: return receiveCancel(message, now: now)
        case .timeout: return receiveTimeout(message, now: now)
        case .hangUp: return receiveHangUp(message, now: now)
        case .stop: return receiveStop(message, now: now)
        case .heartbeat: return receiveHeartbeat(message, now: now)
        case .notAnswered, .alreadyAnswered, .alreadyRejected:
            // Only a device sends these; one arriving here is a peer's mistake.
            return [.refused(message, .unexpected(event: message.event, phase: phase))]
        }
    }

    // MARK: Queries

    public var phase: CallPhase { state.phase }

    /// True while the device has a session (ringing or answered).
    public var isInSession: Bool { state.info != nil }

    /// The current session, or nil when idle.
    public var session: CallSessionSnapshot? {
        switch state {
        case .idle, .shutDown:
            return nil
        case .ringingIncoming(let ring):
            return ring.info.snapshot(phase: .ringingIncoming, activePeers: [ring.caller])
        case .ringingOutgoing(let ring):
            return ring.info.snapshot(phase: .ringingOutgoing, activePeers: ring.remaining, peersRinging: ring.rang)
        case .answered(let call):
            return call.snapshot
        }
    }

    /// PROTOCOL.md 4: the answered call and the app user who may open its P2P link, or nil.
    public var answeredCall: AnsweredCall? {
        guard case .answered(let call) = state else { return nil }
        return AnsweredCall(sessionId: call.info.sessionId, peer: call.peer)
    }

    /// The answer policy the next incoming call gets.
    public var answerPolicy: AnswerPolicy { config.answerPolicy }

    /// Armed timers with their due times (for a console; the glue runs them from the effects).
    public var armedTimers: [(timer: CallTimer, at: Int64)] { timers.all }

    // MARK: Shared helpers

    enum Membership {
        /// In the session now.
        case peer
        /// Was in it (a target that left, or lost to another's answer).
        case former
        case stranger
    }

    func membership(of user: String) -> Membership {
        switch state {
        case .idle, .shutDown:
            return .stranger
        case .ringingIncoming(let ring):
            return user == ring.caller ? .peer : .stranger
        case .ringingOutgoing(let ring):
            if ring.remaining.contains(user) { return .peer }
            return ring.info.peers.contains(user) ? .former : .stranger
        case .answered(let call):
            if user == call.peer { return .peer }
            return call.info.peers.contains(user) ? .former : .stranger
        }
    }
}
