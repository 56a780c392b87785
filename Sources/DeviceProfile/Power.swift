import Yams

// The profile's `power` section (PROTOCOL.md 8.4): sleep and wake, and the battery.

extension DeviceProfile {
    /// Sleep, wake and battery (PROTOCOL.md 8.4). Defaults depend on `doorbell.kind`: a battery
    /// doorbell (`doorbell`) sleeps and runs on its battery, the other kinds are awake on an adapter
    /// (`Power.defaults(for:)`; the parser applies them). The memberwise defaults are the screen IPC's.
    public struct Power: Sendable, Equatable {
        /// `power.source` (DP 146: "0" battery, "1" adapter).
        public enum Source: String, Sendable, CaseIterable, Hashable {
            case battery
            case adapter

            /// The DP 146 member (`wireless_powermode`, PROTOCOL.md 8.3).
            public var dpValue: String { self == .battery ? "0" : "1" }
        }

        /// The device sleeps after `sleepAfter` idle seconds (8.4). Default: true for kind
        /// `doorbell`, false otherwise. A device that is not low-power never sleeps.
        public var lowPower: Bool
        /// Idle seconds before sleep (default 180).
        public var sleepAfter: Double
        /// Seconds from a wake request to being awake (default 1.0; a press wakes at once).
        public var wakeLatency: Double
        /// Battery or adapter. Only a battery drains.
        public var source: Source
        /// DP 145's starting percent (default 100).
        public var battery: Int
        /// Percent lost per minute of video sent, per stream (default 1; `source: battery` only).
        public var drainPerStreamMinute: Double
        /// DP 147's starting value: the battery percent at or below which DP 212 `ipc_low_battery`
        /// is reported once (default 20).
        public var lowBatteryThreshold: Int

        public static let defaultSleepAfter = 180.0
        public static let defaultWakeLatency = 1.0
        public static let defaultLowBatteryThreshold = 20
        /// Bounds a profile may use.
        public enum Limits {
            /// Seconds: up to a day of idling before sleep.
            public static let sleepAfter = 86_400.0
            public static let wakeLatency = 60.0
            public static let percent = 0...100
            public static let drainPerStreamMinute = 100.0
        }

        public init(
            lowPower: Bool = false, sleepAfter: Double = defaultSleepAfter, wakeLatency: Double = defaultWakeLatency,
            source: Source = .adapter, battery: Int = 100, drainPerStreamMinute: Double = 1,
            lowBatteryThreshold: Int = defaultLowBatteryThreshold
        ) {
            self.lowPower = lowPower
            self.sleepAfter = sleepAfter
            self.wakeLatency = wakeLatency
            self.source = source
            self.battery = battery
            self.drainPerStreamMinute = drainPerStreamMinute
            self.lowBatteryThreshold = lowBatteryThreshold
        }

        /// The defaults for a doorbell kind: kind `doorbell` is low-power on a battery.
        public static func defaults(for kind: Doorbell.Kind) -> Power {
            kind == .doorbell ? Power(lowPower: true, source: .battery) : Power()
        }

        /// `sleepAfter` in milliseconds.
        public var sleepAfterMs: Int64 { milliseconds(sleepAfter) }
        /// `wakeLatency` in milliseconds.
        public var wakeLatencyMs: Int64 { milliseconds(wakeLatency) }
        /// True when video sent drains the battery (`source: battery` and a non-zero drain).
        public var drains: Bool { source == .battery && drainPerStreamMinute > 0 }
    }
}

// MARK: - Parsing

extension ProfileParser {
    static let powerKeys = ["lowPower", "sleepAfter", "wakeLatency", "source", "battery", "drainPerStreamMinute",
                            "lowBatteryThreshold"]

    /// `kind` is nil when the doorbell section had a mistake: the fields are still checked, the
    /// rules that need the kind are not.
    func power(_ top: MappingReader, kind: Profile.Doorbell.Kind?) -> Profile.Power? {
        let defaults = Profile.Power.defaults(for: kind ?? .screenIPC)
        guard let node = top["power"] else { return defaults }
        guard let m = diagnostics.mapping(node, at: "power", allowed: Self.powerKeys) else { return nil }
        typealias L = Profile.Power.Limits
        let before = diagnostics.errors.count
        let lowPower = m.bool("lowPower")
        let sleepAfter = m.seconds("sleepAfter", max: L.sleepAfter)
        let wakeLatency = m.seconds("wakeLatency", allowZero: true, max: L.wakeLatency)
        let source = m.oneOf("source", Profile.Power.Source.allCases.map(\.rawValue)).flatMap(Profile.Power.Source.init(rawValue:))
        let battery = m.int("battery", in: L.percent)
        let drain = m["drainPerStreamMinute"].flatMap {
            diagnostics.number($0, at: m.field("drainPerStreamMinute"), noun: "a number of percent per minute (0 or more)",
                               max: L.drainPerStreamMinute)
        }
        let threshold = m.int("lowBatteryThreshold", in: L.percent)
        guard diagnostics.errors.count == before else { return nil }

        var power = defaults
        if let lowPower { power.lowPower = lowPower }
        if let sleepAfter { power.sleepAfter = sleepAfter }
        if let wakeLatency { power.wakeLatency = wakeLatency }
        if let source { power.source = source }
        if let battery { power.battery = battery }
        if let drain { power.drainPerStreamMinute = drain }
        if let threshold { power.lowBatteryThreshold = threshold }

        // PROTOCOL.md 8: an ac_doorbell is mains powered and always awake.
        if kind == .acDoorbell, power.lowPower, let node = m["lowPower"] {
            diagnostics.add(.inconsistent, at: node.mark, field: m.field("lowPower"),
                            "an ac_doorbell is mains powered and always awake (PROTOCOL.md 8): lowPower must be false, or use doorbell.kind: doorbell")
            return nil
        }
        if !power.lowPower {
            for key in ["sleepAfter", "wakeLatency"] where m.has(key) {
                diagnostics.warn(at: m[key]?.mark, field: m.field(key), "\(key) applies when power.lowPower is true: ignored")
            }
        }
        if power.source != .battery, let node = m["drainPerStreamMinute"] {
            diagnostics.warn(at: node.mark, field: m.field("drainPerStreamMinute"),
                             "drainPerStreamMinute applies to power.source battery, not \(power.source.rawValue): ignored")
        }
        return power
    }
}

extension Diagnostics {
    /// A finite number (integer or decimal) from 0 to `max`.
    func number(_ node: Node, at path: String, noun: String, max: Double) -> Double? {
        let value: Double?
        switch node.tagName {
        case .int: value = node.int.map(Double.init)
        case .float: value = node.float
        default: value = nil
        }
        guard let value, value.isFinite else {
            add(.wrongType, at: node.mark, field: path, "expected \(noun), got \(describe(node))")
            return nil
        }
        guard value >= 0, value <= max else {
            add(.invalidValue, at: node.mark, field: path,
                "expected a number from 0 to \(formatNumber(max)), got \(scalarText(node))")
            return nil
        }
        return value
    }
}

func formatNumber(_ x: Double) -> String {
    if x == x.rounded(), abs(x) < 1e9 { return "\(Int(x))" }
    return "\(x)"
}
