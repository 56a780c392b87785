import IPCWire

/// The device role's states. Exactly one session at a time (PROTOCOL.md 3.1.2).
enum DeviceState: Sendable {
    case idle
    /// An app called; the device rings (PROTOCOL.md 3.1).
    case ringingIncoming(IncomingRing)
    /// The device called its targets; none has answered (PROTOCOL.md 3.2).
    case ringingOutgoing(OutgoingRing)
    /// Answered, either direction (PROTOCOL.md 3.3).
    case answered(ActiveCall)
    case shutDown
}

/// An app's call ringing on the device.
struct IncomingRing: Sendable {
    let info: SessionInfo
    /// The app user who called.
    var caller: String { info.peers[0] }
}

/// The device's call ringing at its targets.
struct OutgoingRing: Sendable {
    let info: SessionInfo
    /// Targets still in the call (not busy, not rejected), in call order.
    var remaining: [String]
    /// Targets that sent `ring`.
    var rang: [String] = []
    /// Targets that left with `busy`.
    var busy: [String] = []
    /// Targets that left with `reject` (or `hang_up`/`stop` before answering).
    var rejected: [String] = []

    init(info: SessionInfo) {
        self.info = info
        self.remaining = info.peers
    }

    /// Removes a target that left; true when none is left.
    mutating func remove(_ user: String, busy isBusy: Bool) -> Bool {
        remaining.removeAll { $0 == user }
        if isBusy { busy.append(user) } else { rejected.append(user) }
        return remaining.isEmpty
    }

    /// PROTOCOL.md 3.2.3: with no target left the call ends, `busy` if every target was busy,
    /// else `rejected`.
    var emptyEnding: Ending {
        busy.count == info.peers.count
            ? Ending(.busy, by: .remote, reason: .busy)
            : Ending(.rejected, by: .remote, reason: .rejected)
    }
}

extension DeviceState {
    var phase: CallPhase {
        switch self {
        case .idle: .idle
        case .ringingIncoming: .ringingIncoming
        case .ringingOutgoing: .ringingOutgoing
        case .answered: .answered
        case .shutDown: .shutDown
        }
    }

    /// The session the device has, if any.
    var info: SessionInfo? {
        switch self {
        case .idle, .shutDown: nil
        case .ringingIncoming(let ring): ring.info
        case .ringingOutgoing(let ring): ring.info
        case .answered(let call): call.info
        }
    }
}
