import IPCWire

/// What the glue must do after a power input (PROTOCOL.md 8.4), in order.
public enum PowerEffect: Sendable, Equatable {
    /// Run `timer` and feed `PowerMachine.timerFired(timer, now:)` back at `at` (unix ms). Arming a
    /// timer that is already armed replaces it.
    case armTimer(CallTimer, at: Int64)
    /// Forget `timer`; if it still fires, the machine ignores it.
    case cancelTimer(CallTimer)
    /// Write these DPs into the device's `DataPointStore` (`deviceSet`) and publish them as one
    /// protocol 4 report. Only DPs the device has appear.
    case report([DPEntry])
    /// Write these DPs into the store, then publish every DP of the device as one protocol 4
    /// report (8.4: on waking "the device reports DP 149 true and every DP").
    case reportAll(setting: [DPEntry])
    /// The device fell asleep: republish the retained meta with `"awake":false` (8.4).
    case fellAsleep
    /// A wake began: the device is awake at `until` (unix ms).
    case waking(until: Int64)
    /// The device is awake again, `latencyMs` after the wake request (0 for a press): republish the
    /// retained meta with `"awake":true`.
    case wokeUp(latencyMs: Int64)
    /// Protocol 5 commands held while asleep because they set DP 149 to true, in arrival order:
    /// apply each now (`DataPointStore.applySet`) and report its outcome, "as if they had come
    /// then" (8.4). Comes after the wake's `reportAll`.
    case applyHeld([HeldDPSet])
    /// The battery's whole percent changed (DP 145 is in the `report` before this): for metrics
    /// and logs.
    case battery(percent: Int)
    /// The battery fell to or below the low-battery threshold (DP 147) from above: DP 212
    /// `ipc_low_battery` is in the `report` before this (when the device has DP 212).
    case lowBattery(percent: Int)
}

/// A protocol 5 held while the device was asleep or waking (PROTOCOL.md 8.4).
public struct HeldDPSet: Sendable, Equatable {
    public var uid: String
    /// The `dps` as received (key and raw JSON value), for `DataPointStore.applySet`.
    public var dps: [(key: String, value: JSONValue)]
    /// When it arrived (unix ms).
    public var receivedAt: Int64

    public init(uid: String, dps: [(key: String, value: JSONValue)], receivedAt: Int64) {
        self.uid = uid
        self.dps = dps
        self.receivedAt = receivedAt
    }

    public static func == (a: HeldDPSet, b: HeldDPSet) -> Bool {
        a.uid == b.uid && a.receivedAt == b.receivedAt && a.dps.count == b.dps.count
            && zip(a.dps, b.dps).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// What to do with a message that arrived (PROTOCOL.md 8.4), with the machine's effects.
public struct PowerVerdict: Sendable, Equatable {
    public enum Disposition: Sendable, Equatable {
        /// Handle it as usual (the device is awake, or the protocol is never dropped).
        case serve
        /// Asleep (or still waking): drop it and count it.
        case drop
        /// A protocol 5 setting DP 149 to true while asleep: the device wakes; the command comes
        /// back in `PowerEffect.applyHeld` once awake.
        case heldForWake
    }

    public var disposition: Disposition
    public var effects: [PowerEffect]

    public init(_ disposition: Disposition, effects: [PowerEffect] = []) {
        self.disposition = disposition
        self.effects = effects
    }
}
