import IPCWire

/// The app side of a doorbell call (PROTOCOL.md 8.1, 8.2), as the SDK shows it: a 43 from a
/// household device rings the phone; the user accepts (`accept`, then heartbeats every
/// `heartbeatInterval` with a watchdog), declines or hangs up (`stop`); the device's `answered`,
/// `timeout`, `cancel` and `stop` end or carry on the call; every ending is a `CallRecord` with
/// its SDK error code (PROTOCOL.md 3.5: -2522 answered by others, -2523 cancelled, -2530 timeout,
/// -2531 connect failed, -2532 disconnect, -2513 peer hung up ...). Sans-IO, with the effect and
/// timer vocabulary of the §3 engines; §3 `rtc` events are `AppCallEngine`'s and ignored here.
public struct AppDoorbellEngine: Sendable, CallRoleEngine {
    public internal(set) var config: AppDoorbellConfig
    var state: AppDoorbellState = .idle
    var timers = ArmedTimers()
    var endedSessions = EndedSessions()

    public init(config: AppDoorbellConfig) {
        self.config = config
    }

    public var role: CallRole { .app }
    var userId: String { config.userId }

    // MARK: Inputs

    /// The one entry point: `route` (Shared/CallRoleEngine.swift) takes `input` to the matching
    /// function. §3 calls are `AppCallEngine`'s and ignored here; the link is only recorded (the
    /// device enforces its timers).
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] { route(input, now: now) }

    /// PROTOCOL.md 8.1: a 43 from a device. One of the household's, while no doorbell call is on:
    /// the phone rings, and the app waits for the device's ring timeout (plus a grace) at most.
    /// Anything else (another device, a call already on, the same press redelivered, during its
    /// call or after it ended) is ignored.
    public mutating func pressed(_ press: DoorbellPressMessage, now: Int64) -> [CallEffect] {
        guard case .idle = state, !press.edata.isEmpty else { return [] }
        // [ours] The 43 of a doorbell call this app has already ended, delivered again: no ring.
        guard !endedSessions.contains(press.edata) else { return [] }
        guard config.devices.isEmpty || config.devices.contains(press.devId) else { return [] }
        let deadline = now.addingSaturating(config.ringTimeoutMs).addingSaturating(config.ringGraceMs)
        let ring = AppDoorbellRing(devId: press.devId, callId: press.edata, startedAt: now, deadline: deadline)
        state = .ringing(ring)
        var effects: [CallEffect] = [
            .startRinging(sessionId: ring.callId),
            timers.arm(CallTimer(.ringTimeout, sessionId: ring.callId), at: deadline),
        ]
        switch config.policy {
        case .answerAfter(let ms):
            effects.append(timers.arm(CallTimer(.autoAnswer, sessionId: ring.callId), at: now.addingSaturating(max(0, ms))))
        case .rejectAfter(let ms):
            effects.append(timers.arm(CallTimer(.autoReject, sessionId: ring.callId), at: now.addingSaturating(max(0, ms))))
        case .reject, .busy:
            effects += decline(ring, reason: nil, now: now)
        case .ignore, .manual:
            break
        }
        return effects
    }

    // MARK: Queries

    public var phase: CallPhase { state.phase }

    /// The SDK's "on calling": a doorbell call rings or is answered.
    public var isOnCalling: Bool { state.call != nil }

    /// The current doorbell call, seen as an incoming call of type 3 from the device.
    public var session: CallSessionSnapshot? {
        switch state {
        case .idle, .shutDown:
            return nil
        case .ringing(let r), .accepting(let r):
            return snapshot(devId: r.devId, callId: r.callId, phase: .ringingIncoming, deadline: r.deadline,
                            startedAt: r.startedAt)
        case .answered(let c):
            return snapshot(devId: c.peer, callId: c.callId, phase: .answered, deadline: c.deadline,
                            startedAt: c.startedAt, answeredAt: c.answeredAt, media: c.media)
        }
    }

    /// The answered call and the device to open the P2P link with (`sessionid` = the call id).
    public var answeredCall: AnsweredCall? {
        guard case .answered(let c) = state else { return nil }
        return AnsweredCall(sessionId: c.callId, peer: c.peer)
    }

    public var armedTimers: [(timer: CallTimer, at: Int64)] { timers.all }

    func snapshot(devId: String, callId: String, phase: CallPhase, deadline: Int64, startedAt: Int64,
                  answeredAt: Int64? = nil, media: MediaLinkState? = nil) -> CallSessionSnapshot {
        CallSessionSnapshot(sessionId: callId, direction: .incoming, phase: phase, callType: .oneToMoreSpecial,
                            peers: [devId], activePeers: [devId], peersRinging: [],
                            answeredBy: answeredAt == nil ? nil : userId, deadline: deadline, startedAt: startedAt,
                            answeredAt: answeredAt, mediaLink: media,
                            extra: CallExtra(bizType: videoDoorbellBodyType, channelType: ChannelType.audioVideo.rawValue))
    }

    /// A message this app sends about call `callId` of `devId`.
    func outgoing(_ event: DoorbellEvent, devId: String, callId: String, reason: StopReason? = nil) -> CallEffect {
        .sendDoorbell(VideoDoorbellMessage(devId: devId, uid: userId, event: event, eData: callId, reason: reason?.rawValue))
    }
}
