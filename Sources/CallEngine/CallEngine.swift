import IPCWire

/// The call engine of PROTOCOL.md section 3: one sans-IO state machine, two roles.
///
/// - `DeviceCallEngine`: the doorbell (3.1 incoming calls, 3.2 doorbell presses, 3.3 heartbeats,
///   link timers and shutdown, 3.4 refusals).
/// - `AppCallEngine`: the SDK side (startCall, listen mode, heartbeats, SDK error codes of 3.5).
///
/// Both take the same `CallInput`s with the current time (unix ms) and return `CallEffect`s for
/// the glue to carry out in order. Neither reads a clock, sleeps, makes random numbers, or does
/// I/O. `CallEngine` wraps either role behind one type for glue that does not care which.
public struct CallEngine: Sendable {
    public enum Role: Sendable {
        case device(DeviceCallEngine)
        case app(AppCallEngine)
    }

    public private(set) var role: Role

    public init(device config: DeviceEngineConfig) {
        role = .device(DeviceCallEngine(config: config))
    }

    public init(app config: AppEngineConfig) {
        role = .app(AppCallEngine(config: config))
    }

    /// Feeds one input at `now` (unix ms); returns what to do, in order.
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] {
        switch role {
        case .device(var engine):
            let effects = engine.handle(input, now: now)
            role = .device(engine)
            return effects
        case .app(var engine):
            let effects = engine.handle(input, now: now)
            role = .app(engine)
            return effects
        }
    }

    /// The local action, throwing instead of returning `.actionRefused`.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        switch role {
        case .device(var engine):
            let effects = try engine.perform(action, now: now)
            role = .device(engine)
            return effects
        case .app(var engine):
            let effects = try engine.perform(action, now: now)
            role = .app(engine)
            return effects
        }
    }

    public var localId: String {
        switch role {
        case .device(let e): e.config.devId
        case .app(let e): e.config.userId
        }
    }

    public var phase: CallPhase {
        switch role {
        case .device(let e): e.phase
        case .app(let e): e.phase
        }
    }

    public var session: CallSessionSnapshot? {
        switch role {
        case .device(let e): e.session
        case .app(let e): e.session
        }
    }

    public var answeredCall: AnsweredCall? {
        switch role {
        case .device(let e): e.answeredCall
        case .app(let e): e.answeredCall
        }
    }
}
