import IPCWire

/// The app side's doorbell states: one doorbell call at a time.
enum AppDoorbellState: Sendable {
    case idle
    /// A 43 from a household device: the phone rings (PROTOCOL.md 8.1).
    case ringing(AppDoorbellRing)
    /// This user sent `accept`; the device's `answered` has not come yet (8.2).
    case accepting(AppDoorbellRing)
    /// The device said `answered` naming this user: the call is ours (8.2).
    case answered(DoorbellCall)
    case shutDown
}

struct AppDoorbellRing: Sendable {
    let devId: String
    let callId: String
    let startedAt: Int64
    /// When the app gives up waiting (the device's ring timeout plus a grace).
    let deadline: Int64
}

extension AppDoorbellState: CallRoleState {
    var phase: CallPhase {
        switch self {
        case .idle: .idle
        case .ringing, .accepting: .ringingIncoming
        case .answered: .answered
        case .shutDown: .shutDown
        }
    }

    /// The current call's device and id, or nil.
    var call: (devId: String, callId: String)? {
        switch self {
        case .idle, .shutDown: nil
        case .ringing(let r), .accepting(let r): (r.devId, r.callId)
        case .answered(let c): (c.peer, c.callId)
        }
    }
}
