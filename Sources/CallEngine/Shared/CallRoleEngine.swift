import IPCWire

/// A role's state as the shared code sees it: every role has an idle and a shut-down state.
protocol CallRoleState: Sendable {
    static var idle: Self { get }
    static var shutDown: Self { get }
    var phase: CallPhase { get }
}

/// One engine of any role (`DeviceCallEngine`, `AppCallEngine`, `DoorbellCallEngine`,
/// `AppDoorbellEngine`) as the generic code in `Shared/` sees it: the router (`route`), the ending
/// (`end`), the shutdown and the media link are written once over this protocol; each role says
/// only what is its own (how a message, timer or action is taken, what its current call is, what
/// it says on the way out).
protocol CallRoleEngine {
    associatedtype State: CallRoleState
    var state: State { get set }
    var timers: ArmedTimers { get set }
    /// The last sessions this role ended (a late duplicate of their `call` or 43 does not ring).
    var endedSessions: EndedSessions { get set }
    var phase: CallPhase { get }

    /// A decoded 308 event (PROTOCOL.md 3). Default: ignored (the doorbell app's engine).
    mutating func receive(_ message: CallMessage, now: Int64) -> [CallEffect]
    /// A decoded `video_doorbell` message (PROTOCOL.md 8.2). Default: ignored (the §3 app).
    mutating func receive(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect]
    /// A doorbell press announced by a device (the 43, PROTOCOL.md 8.1). Default: ignored (only
    /// the doorbell app's engine takes one; a device never takes its own kind's announcement).
    mutating func pressed(_ press: DoorbellPressMessage, now: Int64) -> [CallEffect]
    mutating func timerFired(_ timer: CallTimer, now: Int64) -> [CallEffect]
    mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect]

    /// The current call as it ends with `ending` at `now` (see `end`), or nil when there is none.
    func closingCall(_ ending: Ending, now: Int64) -> ClosingCall?
    /// What `end` does when there is no call (default: nothing; the doorbell closes its message
    /// window's timer).
    mutating func endWithoutCall() -> [CallEffect]
    /// What the role sends about its current call when it shuts down, and how that call ends; nil
    /// when there is no call.
    func farewell() -> Farewell?

    /// The answered call's P2P link: its session and state, or nil when no call is answered.
    var linkedMedia: (sessionId: String, media: MediaLinkState)? { get }
    mutating func setLinkedMedia(_ media: MediaLinkState)
    /// The grace after a link loss before the call stops (PROTOCOL.md 3.3), or nil for a role
    /// that only records the link's state (the apps: the device enforces the link timers).
    var mediaLostGraceMs: Int64? { get }
}

/// The current call as it ends: what `end` stops, closes and reports.
struct ClosingCall {
    let sessionId: String
    /// It rings here: `.stopRinging` first.
    var stopsRinging = false
    /// It was answered: `.closeMediaLink` first.
    var closesLink = false
    let record: CallRecord
}

/// What a role sends about its current call as it shuts down, then how the call ends.
struct Farewell {
    var messages: [CallEffect]
    var ending: Ending
}

extension CallRoleEngine {
    mutating func receive(_ message: CallMessage, now: Int64) -> [CallEffect] { [] }
    mutating func receive(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] { [] }
    mutating func pressed(_ press: DoorbellPressMessage, now: Int64) -> [CallEffect] { [] }
    mutating func endWithoutCall() -> [CallEffect] { [] }

    /// The one router of every role: `input` to the matching function. A refused local action
    /// comes back as `.actionRefused`.
    mutating func route(_ input: CallInput, now: Int64) -> [CallEffect] {
        switch input {
        case .received(let message):
            return receive(message, now: now)
        case .receivedDoorbell(let message):
            return receive(message, now: now)
        case .doorbellPressed(let press):
            return pressed(press, now: now)
        case .timerFired(let timer):
            return timerFired(timer, now: now)
        case .local(let action):
            do {
                return try perform(action, now: now)
            } catch {
                return [.actionRefused(action, error)]
            }
        case .mediaLinkUp(let sessionId):
            return mediaLinkUp(sessionId: sessionId, now: now)
        case .mediaLinkDown(let sessionId):
            return mediaLinkDown(sessionId: sessionId, now: now)
        case .shutdown:
            return shutdown(now: now)
        }
    }
}
