import IPCWire

/// The device role's states (PROTOCOL.md 3.1 incoming, 3.2 outgoing, 3.3 answered). Exactly one
/// session at a time (PROTOCOL.md 3.1.2).
typealias DeviceState = SessionState<OutgoingRing>

/// An app's call ringing on the device.
struct IncomingRing: Sendable {
    let info: SessionInfo
    /// The app user who called.
    var caller: String { info.peers[0] }
}

/// The device's call ringing at its targets.
struct OutgoingRing: OutgoingSession {
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
