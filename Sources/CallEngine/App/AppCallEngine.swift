import IPCWire

/// The app role of the call engine: the SDK side (ThingSmartCallChannel) of PROTOCOL.md section 3,
/// as a sans-IO state machine. It calls devices (`startCall`), takes their calls (listen mode),
/// drives heartbeats once answered, and reports every ending with its SDK error code (3.5).
public struct AppCallEngine: Sendable {
    public internal(set) var config: AppEngineConfig
    var state: AppState = .idle
    var timers = ArmedTimers()
    var endedSessions = EndedSessions()

    public init(config: AppEngineConfig) {
        self.config = config
    }

    public var role: CallRole { .app }
    var userId: String { config.userId }

    // MARK: Inputs

    /// The one entry point: `route` (Shared/CallRoleEngine.swift) takes `input` to the matching
    /// function below. A refused local action comes back as `.actionRefused`.
    /// Doorbell calls (PROTOCOL.md 8) are `AppDoorbellEngine`'s; the §3 engine ignores them.
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] { route(input, now: now) }

    /// A decoded 308 event arrived.
    public mutating func receive(_ message: CallMessage, now: Int64) -> [CallEffect] {
        if let refusal = refusalBeforeRouting(message) { return refusal }
        // A device's out topic carries the messages of every target: only ours concern us.
        guard message.targetId == userId else {
            return [.refused(message, .notAddressedToUs(targetId: message.targetId))]
        }
        if message.event == .call { return receiveCall(message, now: now) }

        // [ours] A message for a session this app has just ended crossed our ending on the wire
        // (a device heartbeat sent as we hung up): dropped and counted, no reply. 3.1.7: "the other
        // side does not reply" to a hang-up; a `stop` back would be noise on the device's topic.
        if state.info?.sessionId != message.sessionId, endedSessions.contains(message.sessionId) {
            return [.refused(message, .sessionEnded)]
        }
        // 3.4 (mirrored): an event for a session we do not have, or from someone not in it.
        guard let info = state.info, info.sessionId == message.sessionId else {
            return refuseUndefinedSession(message, why: .undefinedSession)
        }
        guard message.curId == state.peer else {
            return refuseUndefinedSession(message, why: .notInSession(userId: message.curId))
        }

        switch message.event {
        case .call: return receiveCall(message, now: now)
        case .ring: return receiveRing(message, now: now)
        case .answer: return receiveAnswer(message, now: now)
        case .heartbeat: return receiveHeartbeat(message, now: now)
        case .reject, .busy, .notAnswered, .hangUp, .cancel, .alreadyAnswered, .alreadyRejected, .stop, .timeout:
            return receiveEnding(message, now: now)
        }
    }

    // MARK: Queries

    public var phase: CallPhase { state.phase }

    /// The SDK's `isOnCalling`: true while a call rings or is answered.
    public var isOnCalling: Bool { state.info != nil }

    /// The current session, or nil when idle.
    public var session: CallSessionSnapshot? {
        switch state {
        case .idle, .shutDown:
            return nil
        case .ringingOutgoing(let call):
            return call.info.snapshot(phase: .ringingOutgoing, activePeers: [call.device],
                                      peersRinging: call.peerRang ? [call.device] : [])
        case .ringingIncoming(let ring):
            return ring.info.snapshot(phase: .ringingIncoming, activePeers: [ring.caller])
        case .answered(let call):
            return call.snapshot
        }
    }

    /// The answered call and the device to open the P2P link with, or nil.
    public var answeredCall: AnsweredCall? {
        guard case .answered(let call) = state else { return nil }
        return AnsweredCall(sessionId: call.info.sessionId, peer: call.peer)
    }

    /// Armed timers with their due times.
    public var armedTimers: [(timer: CallTimer, at: Int64)] { timers.all }
}
