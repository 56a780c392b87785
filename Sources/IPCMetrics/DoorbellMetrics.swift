import Prometheus

/// The doorbell series of PROTOCOL.md 8 (docs/control.md, Metrics): what a device's
/// `DoorbellCounters` counted, read at each scrape like the other device counts, and whether it
/// sleeps now.
extension ControlMetrics {
    /// One device's doorbell counts (or a fleet's sums) at a scrape.
    public struct DoorbellGauges: Sendable, Equatable {
        /// Presses that announced a call or left a message (8.1, 8.5).
        public var presses = 0
        /// Presses while a doorbell call was on: counted and ignored (8.1).
        public var pressesIgnored = 0
        /// Wakes completed (8.4).
        public var wakes = 0
        /// Payloads on the wake topic that were not the CRC32 of the localKey (8.4).
        public var badWakes = 0
        /// Messages dropped while asleep (8.4).
        public var droppedWhileAsleep = 0
        /// DPs of protocol 5 commands not applied (8.3).
        public var dpRefusals = 0
        /// Protocol 4 reports published (8.3).
        public var dpReports = 0
        /// Left messages recorded (8.5).
        public var messages = 0
        /// Pushes that failed or were lost (8.8).
        public var pushFailures = 0
        /// 312 commands refused (8.6).
        public var streamControlRefusals = 0
        /// Devices asleep now (0 or 1 for one device).
        public var asleep = 0

        public init() {}

        mutating func add(_ o: DoorbellGauges) {
            presses += o.presses
            pressesIgnored += o.pressesIgnored
            wakes += o.wakes
            badWakes += o.badWakes
            droppedWhileAsleep += o.droppedWhileAsleep
            dpRefusals += o.dpRefusals
            dpReports += o.dpReports
            messages += o.messages
            pushFailures += o.pushFailures
            streamControlRefusals += o.streamControlRefusals
            asleep += o.asleep
        }
    }

    /// Writes one device's (or the fleet's) doorbell series; every family gets its series even at zero.
    func writeDoorbell(_ d: DoorbellGauges, _ l: [(String, String)], _ fed: inout [ObjectIdentifier: Int64]) {
        feed(.doorbellPresses, l, d.presses, &fed)
        feed(.doorbellPressesIgnored, l, d.pressesIgnored, &fed)
        feed(.wakes, l, d.wakes, &fed)
        feed(.badWakes, l, d.badWakes, &fed)
        feed(.droppedWhileAsleep, l, d.droppedWhileAsleep, &fed)
        feed(.dpRefusals, l, d.dpRefusals, &fed)
        feed(.dpReports, l, d.dpReports, &fed)
        feed(.doorbellMessages, l, d.messages, &fed)
        feed(.pushFailures, l, d.pushFailures, &fed)
        feed(.streamControlRefusals, l, d.streamControlRefusals, &fed)
        registry.makeGauge(descriptor: Family.asleep.descriptor, labels: l).set(Double(d.asleep))
    }
}

extension ControlMetrics.Family {
    static let doorbellPresses = Self(name: "doorbell_presses", unit: "total",
                                      help: "Doorbell presses that announced a call over protocol 43 or left a message (PROTOCOL.md 8.1).")
    static let doorbellPressesIgnored = Self(name: "doorbell_presses_ignored", unit: "total",
                                             help: "Doorbell presses while a doorbell call was ringing or connected, ignored (PROTOCOL.md 8.1).")
    static let wakes = Self(name: "wakes", unit: "total", help: "Wakes completed (PROTOCOL.md 8.4).")
    static let badWakes = Self(name: "bad_wakes", unit: "total",
                               help: "Payloads on the wake topic that were not the CRC32 of the localKey (PROTOCOL.md 8.4).")
    static let droppedWhileAsleep = Self(name: "dropped_while_asleep", unit: "total",
                                         help: "Messages dropped while the device slept (PROTOCOL.md 8.4).")
    static let dpRefusals = Self(name: "dp_refusals", unit: "total",
                                 help: "DPs of protocol 5 commands not applied: read-only, wrong type, out of range, unknown (PROTOCOL.md 8.3).")
    static let dpReports = Self(name: "dp_reports", unit: "total", help: "Protocol 4 DP reports published (PROTOCOL.md 8.3).")
    static let doorbellMessages = Self(name: "doorbell_messages", unit: "total", help: "Left messages recorded (PROTOCOL.md 8.5).")
    static let pushFailures = Self(name: "push_failures", unit: "total", help: "Pushes that failed or were lost (PROTOCOL.md 8.8).")
    static let streamControlRefusals = Self(name: "stream_control_refusals", unit: "total",
                                            help: "Protocol 312 commands refused (PROTOCOL.md 8.6).")
    static let asleep = Self(name: "devices_asleep", unit: "",
                             help: "1 while the device sleeps (PROTOCOL.md 8.4; a fleet: devices asleep).")
}
