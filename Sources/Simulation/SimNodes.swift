import CallEngine
import IPCWire

/// What the simulator needs of a device's engine: the real `DeviceSideEngine`, or (tests) a wrapper
/// around it that breaks a rule on purpose.
public protocol SimulatedDeviceEngine: Sendable {
    mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect]
    var answeredCall: AnsweredCall? { get }
    var armedTimers: [(timer: CallTimer, at: Int64)] { get }
    var phase: CallPhase { get }
}

extension DeviceSideEngine: SimulatedDeviceEngine {}

/// The device kinds of PROTOCOL.md 8 (`doorbell.kind`).
enum DeviceKind: String, Sendable {
    case screenIPC = "screen_ipc"
    case acDoorbell = "ac_doorbell"
    case doorbell
}

/// The MQTT connection of a node as the broker sees it.
struct Connection {
    var connected = true
    /// Bumped at each drop: a delivery scheduled in an earlier epoch was in flight when the
    /// (clean-session) connection went, and is lost.
    var epoch = 0
    /// The node's clock minus the true time (a clock jump on one side).
    var clockOffsetMs: Int64 = 0
}

/// A P2P link of a device (PROTOCOL.md 4), as the simulated network knows it.
struct SimLinkState {
    var session: String
    var peer: String
    var user: Int
    var generation: UInt64
    var up = false
}

/// One simulated device: the real device-side engine, the real link rules and refusal limiter, and
/// the glue's bookkeeping (armed timers, links, the session it is in).
struct SimDevice<Engine: SimulatedDeviceEngine> {
    let devId: String
    let kind: DeviceKind
    var engine: Engine
    var linkRules: P2PLinkRules
    var limiter = RefusalReplyLimiter()
    /// Household user indices (the subscribers of its out topic), in order.
    let household: [Int]
    /// The human at the device answers calls (else an auto policy does).
    let manual: Bool
    let auth: String
    var timers: [CallTimer: UInt64] = [:]
    var connection = Connection()
    var links: [SimLinkState] = []
    /// The session the ledger saw it open and not yet end.
    var open: String?
}

/// One simulated app user: the real §3 app engine and doorbell app engine, and the glue's
/// bookkeeping.
struct SimUser {
    let userId: String
    var call: AppCallEngine
    var bell: AppDoorbellEngine
    /// Devices whose household it is in (it subscribes to their out topics).
    var devices: [Int] = []
    var callTimers: [CallTimer: UInt64] = [:]
    var bellTimers: [CallTimer: UInt64] = [:]
    var connection = Connection()
    /// Open links: session, device index, engine slot.
    var links: [(session: String, device: Int, slot: EngineSlot)] = []
    var openCall: String?
    var openBell: String?
    var sessionCounter = 0

    func open(_ slot: EngineSlot) -> String? { slot == .call ? openCall : openBell }

    mutating func setOpen(_ slot: EngineSlot, _ session: String?) {
        if slot == .call { openCall = session } else { openBell = session }
    }
}
