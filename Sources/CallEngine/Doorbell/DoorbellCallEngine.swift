import IPCWire

/// The device's doorbell call machine (PROTOCOL.md 8.1, 8.2, 8.5): kinds `ac_doorbell` and
/// `doorbell`, whose press announces a call with a 43 and whose household answers it with 308
/// `video_doorbell` messages. A sans-IO state machine beside `DeviceCallEngine`, with the same
/// inputs, effects and timers: feed it inputs with the current time, do what the returned effects
/// say, in order. It never reads a clock, makes random numbers or does I/O.
///
/// The rules live one file per event received (`Receiving/DoorbellReceiving*`), plus timers, local
/// actions, the media link, shutdown and the call's ending; each cites the PROTOCOL.md section it
/// implements. Calls are seen as outgoing calls of type 3 (one-to-more, the first accept wins, a
/// decline removes only that user): the device rings every household user at once.
public struct DoorbellCallEngine: Sendable, CallRoleEngine {
    public internal(set) var config: DoorbellEngineConfig
    var state: DoorbellState = .idle
    var timers = ArmedTimers()
    var endedSessions = EndedSessions()
    /// Kept for `DeviceSideEngine`'s passthrough; a doorbell takes no §3 incoming call, so it has
    /// no effect here.
    public internal(set) var answerPolicy: AnswerPolicy = .manual
    /// Kept for `DeviceSideEngine`'s passthrough; a doorbell takes no §3 incoming call to answer
    /// `busy`, so it has no effect here.
    public internal(set) var isActingBusy = false

    public init(config: DoorbellEngineConfig) {
        self.config = config
    }

    public var role: CallRole { .device }
    var devId: String { config.devId }

    // MARK: Inputs

    /// The one entry point: `route` (Shared/CallRoleEngine.swift) takes `input` to the matching
    /// function. A refused local action comes back as `.actionRefused`.
    /// The 43 is this device's own announcement (8.1); a device never takes one.
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] { route(input, now: now) }

    /// A decoded `video_doorbell` message arrived (PROTOCOL.md 8.2).
    public mutating func receive(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] {
        if case .shutDown = state { return [.refusedDoorbell(message, .shutDown)] }
        guard let uid = message.uid, !uid.isEmpty else { return [.refusedDoorbell(message, .anonymous)] }
        // 8.2: "A video_doorbell message whose eData is not the current call, or from a user
        // outside the household, gets nothing and changes nothing (counted)."
        guard config.members.contains(uid) else { return [.refusedDoorbell(message, .notInHousehold(userId: uid))] }
        guard let callId = state.callId, callId == message.eData else {
            return [.refusedDoorbell(message, .notCurrentCall(eData: message.eData))]
        }
        switch message.event {
        case .accept: return receiveAccept(message, from: uid, now: now)
        case .stop: return receiveStop(message, from: uid, now: now)
        case .heartbeat: return receiveHeartbeat(message, from: uid, now: now)
        case .answered, .timeout, .cancel:
            // Only a device sends these (8.2); one arriving here is a peer's mistake.
            return unexpected(message)
        }
    }

    // MARK: Queries

    public var phase: CallPhase { state.phase }

    /// True while a call rings or is connected.
    public var isInCall: Bool { state.callId != nil }

    /// PROTOCOL.md 8.5: the missed call whose message window is open, or nil.
    public var messageWindowCallId: String? {
        guard case .messageWindow(let window) = state else { return nil }
        return window.callId
    }

    /// The current call, or nil (idle, message window, shut down).
    public var session: CallSessionSnapshot? {
        switch state {
        case .idle, .messageWindow, .shutDown:
            return nil
        case .ringing(let ring):
            let members = config.members
            return snapshot(callId: ring.callId, phase: .ringingOutgoing, deadline: ring.deadline, startedAt: ring.startedAt,
                            activePeers: members.filter { !ring.declined.contains($0) })
        case .connected(let call):
            return snapshot(callId: call.callId, phase: .answered, deadline: call.deadline, startedAt: call.startedAt,
                            activePeers: [call.peer], answeredBy: call.peer, answeredAt: call.answeredAt, media: call.media)
        }
    }

    /// PROTOCOL.md 8.2, 4: the accepted call and the user who may open its P2P link (`sessionid` =
    /// the call id), or nil.
    public var answeredCall: AnsweredCall? {
        guard case .connected(let call) = state else { return nil }
        return AnsweredCall(sessionId: call.callId, peer: call.peer)
    }

    /// Armed timers with their due times (for a console; the glue runs them from the effects).
    public var armedTimers: [(timer: CallTimer, at: Int64)] { timers.all }

    // MARK: Shared helpers

    /// `extra` of the snapshots and records of doorbell calls: not on the wire; `bizType` says
    /// `video_doorbell` and `category` the doorbell kind, so a journal tells them from §3 calls.
    var doorbellExtra: CallExtra {
        CallExtra(bizType: videoDoorbellBodyType, channelType: ChannelType.audioVideo.rawValue, category: config.kind)
    }

    func snapshot(callId: String, phase: CallPhase, deadline: Int64, startedAt: Int64, activePeers: [String],
                  answeredBy: String? = nil, answeredAt: Int64? = nil, media: MediaLinkState? = nil) -> CallSessionSnapshot {
        CallSessionSnapshot(sessionId: callId, direction: .outgoing, phase: phase, callType: .oneToMoreSpecial,
                            peers: config.members, activePeers: activePeers, peersRinging: [], answeredBy: answeredBy,
                            deadline: deadline, startedAt: startedAt, answeredAt: answeredAt, mediaLink: media,
                            extra: doorbellExtra)
    }

    /// A message the device sends about call `callId` (8.2).
    func outgoing(_ event: DoorbellEvent, callId: String, uid: String? = nil, reason: StopReason? = nil) -> CallEffect {
        .sendDoorbell(VideoDoorbellMessage(devId: devId, uid: uid, event: event, eData: callId, reason: reason?.rawValue))
    }

    /// An event that makes no sense now, or from this sender: logged, nothing changes.
    func unexpected(_ message: VideoDoorbellMessage) -> [CallEffect] {
        [.refusedDoorbell(message, .unexpectedDoorbell(event: message.event, phase: phase))]
    }
}
