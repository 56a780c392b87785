import IPCWire

/// The device's call engine whatever its kind (PROTOCOL.md 8, profile `doorbell.kind`): the §3
/// engine for `screen_ipc`, the doorbell machine for `ac_doorbell` and `doorbell`. One type, so the
/// Device actor holds one `EngineHost<DeviceSideEngine>`; every query passes through.
public enum DeviceSideEngine: Sendable {
    /// `screen_ipc`: a press places a §3 call (PROTOCOL.md 3).
    case screenIPC(DeviceCallEngine)
    /// `ac_doorbell`, `doorbell`: a press announces a doorbell call (PROTOCOL.md 8.1, 8.2).
    case doorbell(DoorbellCallEngine)

    public init(screenIPC config: DeviceEngineConfig) { self = .screenIPC(DeviceCallEngine(config: config)) }
    public init(doorbell config: DoorbellEngineConfig) { self = .doorbell(DoorbellCallEngine(config: config)) }

    /// Feeds one input at `now` (unix ms); returns what to do, in order.
    public mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] {
        switch self {
        case .screenIPC(var engine):
            let effects = engine.handle(input, now: now)
            self = .screenIPC(engine)
            return effects
        case .doorbell(var engine):
            let effects = engine.handle(input, now: now)
            self = .doorbell(engine)
            return effects
        }
    }

    /// The local action, throwing instead of returning `.actionRefused`.
    public mutating func perform(_ action: LocalAction, now: Int64) throws(CallActionError) -> [CallEffect] {
        switch self {
        case .screenIPC(var engine):
            let effects = try engine.perform(action, now: now)
            self = .screenIPC(engine)
            return effects
        case .doorbell(var engine):
            let effects = try engine.perform(action, now: now)
            self = .doorbell(engine)
            return effects
        }
    }

    public var devId: String {
        switch self {
        case .screenIPC(let e): e.config.devId
        case .doorbell(let e): e.config.devId
        }
    }

    /// True for the doorbell kinds.
    public var isDoorbell: Bool {
        if case .doorbell = self { true } else { false }
    }

    public var phase: CallPhase {
        switch self {
        case .screenIPC(let e): e.phase
        case .doorbell(let e): e.phase
        }
    }

    public var session: CallSessionSnapshot? {
        switch self {
        case .screenIPC(let e): e.session
        case .doorbell(let e): e.session
        }
    }

    /// PROTOCOL.md 4 (and 8.2 with the call id as the session): who may open the P2P link.
    public var answeredCall: AnsweredCall? {
        switch self {
        case .screenIPC(let e): e.answeredCall
        case .doorbell(let e): e.answeredCall
        }
    }

    public var answerPolicy: AnswerPolicy {
        switch self {
        case .screenIPC(let e): e.answerPolicy
        case .doorbell(let e): e.answerPolicy
        }
    }

    public var isActingBusy: Bool {
        switch self {
        case .screenIPC(let e): e.isActingBusy
        case .doorbell(let e): e.isActingBusy
        }
    }

    public var armedTimers: [(timer: CallTimer, at: Int64)] {
        switch self {
        case .screenIPC(let e): e.armedTimers
        case .doorbell(let e): e.armedTimers
        }
    }
}
