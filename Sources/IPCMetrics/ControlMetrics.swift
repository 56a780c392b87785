import CallEngine
import Foundation
import Prometheus
import Synchronization

/// The metrics of one registry of devices (`ipcemu run`'s one device, or a fleet process), kept in
/// its own swift-prometheus `PrometheusCollectorRegistry` and rendered in the Prometheus text
/// exposition format 0.0.4 (docs/control.md lists the names, types and buckets).
///
/// Why a registry per instance and no `MetricsSystem.bootstrap`: the swift-metrics bootstrap is
/// process-global and may run once, while the tests run many devices, registries and control
/// servers in one process, each of which must count only its own devices. Every `ControlMetrics`
/// owns its registry; `factory` hands swift-metrics users (`CoreMetrics.Counter(label:factory:)`)
/// the same registry without touching global state.
///
/// Events (a call ended, a ring sent) update counters and histograms as they happen; what the
/// devices themselves count (frames, reconnects, refusals, connection, calls in progress) is read
/// from them at each scrape and written into the registry just before it is emitted.
public final class ControlMetrics: Sendable {
    /// Upper bounds (seconds) of the call -> ring latency histogram: sub-millisecond to 5 s.
    public static let ringLatencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    /// Upper bounds (seconds) of the call -> answer histogram (someone's reaction time, up to the
    /// 60 s call timeout of PROTOCOL.md 3.2).
    public static let answerWaitBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 20, 30, 45, 60]
    /// Upper bounds (seconds) of the answered call's length histogram.
    public static let callDurationBuckets: [Double] = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600]

    /// One series per device (`device` label), or (false, a fleet's default) one series for all.
    public let perDevice: Bool
    /// Where every series lives; `render` emits it whole.
    public let registry: PrometheusCollectorRegistry
    /// The last value written to each counter fed from a device's own count (by counter
    /// identity). Its Mutex also serialises scrapes: the read-from-device values are written and
    /// emitted as one step.
    private let fedCounters = Mutex<[ObjectIdentifier: Int64]>([:])

    public init(perDevice: Bool = true, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.perDevice = perDevice
        self.registry = registry
    }

    /// A swift-metrics factory on this instance's registry (no global bootstrap needed).
    public var factory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: registry) }

    // MARK: Events

    /// A call ended, with its outcome only.
    public func callEnded(device: String, outcome: CallOutcome) {
        registry.makeCounter(descriptor: Family.calls.descriptor, labels: labels(device) + [("outcome", outcome.rawValue)])
            .increment()
    }

    /// A call ended: counted by outcome; an answered one also observes how long it waited for the
    /// answer and how long it lasted.
    public func callEnded(device: String, record: CallRecord) {
        callEnded(device: device, outcome: record.outcome)
        guard let answeredAt = record.answeredAt else { return }
        let wait = Double(answeredAt - record.startedAt) / 1000
        let length = Double(record.endedAt - answeredAt) / 1000
        if wait >= 0 { histogram(.answerWait, device).record(wait) }
        if length >= 0 { histogram(.callDuration, device).record(length) }
    }

    /// Incoming call: from receiving `call` to sending `ring`.
    public func observeRingLatency(device: String, seconds: Double) {
        guard seconds >= 0, seconds.isFinite else { return }
        histogram(.ringLatency, device).record(seconds)
    }

    // MARK: Scrape

    /// What a scrape reads from one device at that moment.
    public struct DeviceGauges: Sendable {
        public var devId: String
        public var activeCalls: Int
        public var p2pLinkUp: Bool
        public var mqttReconnects: Int
        public var mqttConnected: Bool
        public var framesSent: Int = 0
        public var framesReceived: Int = 0
        public var fps: Double = 0
        /// Refused messages by kind (`RefusalLog.Kind`), issue 10.
        public var refusals: [String: Int] = [:]
        /// Replies to refused messages dropped by PROTOCOL.md 3.4's limits, by scope
        /// (`RefusalReplyLimiter.Scope`: sender, device), issue 23.
        public var refusalRepliesDropped: [String: Int] = [:]
        /// Journal lines that could not be written whole (disk full...), issue 10.
        public var journalWriteFailures = 0
        /// False while the camera's capture last reported no video (a camera unplugged), issue 10.
        public var cameraUp = true
        /// Times the camera stopped delivering video.
        public var cameraLosses = 0
        /// PROTOCOL.md 8: the doorbell counts and whether the device sleeps.
        public var doorbell = DoorbellGauges()
        /// Devices these gauges sum (1 for one device).
        var fleetSize = 1
        var linksUp = 0
        var connected = 0
        /// A fleet's sum: devices whose camera is up (nil for one device: `cameraUp`).
        var camerasUp: Int?

        public init(devId: String, activeCalls: Int, p2pLinkUp: Bool, mqttReconnects: Int, mqttConnected: Bool,
                    framesSent: Int = 0, framesReceived: Int = 0, fps: Double = 0, refusals: [String: Int] = [:]) {
            self.devId = devId
            self.activeCalls = activeCalls
            self.p2pLinkUp = p2pLinkUp
            self.mqttReconnects = mqttReconnects
            self.mqttConnected = mqttConnected
            self.framesSent = framesSent
            self.framesReceived = framesReceived
            self.fps = fps
            self.refusals = refusals
            self.linksUp = p2pLinkUp ? 1 : 0
            self.connected = mqttConnected ? 1 : 0
        }
    }

    /// One series for the whole fleet: sums (active calls, links up, devices connected...).
    static func aggregate(_ devices: [DeviceGauges]) -> DeviceGauges {
        var sum = DeviceGauges(devId: "", activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: false)
        sum.camerasUp = 0
        for d in devices {
            sum.activeCalls += d.activeCalls
            sum.mqttReconnects += d.mqttReconnects
            sum.framesSent += d.framesSent
            sum.framesReceived += d.framesReceived
            sum.fps += d.fps
            for (kind, count) in d.refusals { sum.refusals[kind, default: 0] += count }
            for (scope, count) in d.refusalRepliesDropped { sum.refusalRepliesDropped[scope, default: 0] += count }
            sum.journalWriteFailures += d.journalWriteFailures
            sum.linksUp += d.linksUp
            sum.connected += d.connected
            sum.camerasUp = (sum.camerasUp ?? 0) + (d.cameraUp ? 1 : 0)
            sum.cameraLosses += d.cameraLosses
            sum.doorbell.add(d.doorbell)
        }
        sum.fleetSize = devices.count
        return sum
    }

    /// Writes what the devices (and the process's video fan-outs: their counts summed, the links
    /// subscribed now) report now into the registry and returns the whole exposition.
    public func render(_ devices: [DeviceGauges], fanOut: (any VideoFanOutCounts)? = nil, fanOutSubscribers: Int = 0) -> String {
        fedCounters.withLock { fed in
            writeFanOut(fanOut, subscribers: fanOutSubscribers, &fed)
            if perDevice {
                for d in devices { write(d, &fed) }
            } else {
                registry.makeGauge(descriptor: Family.devices.descriptor).set(Double(devices.count))
                write(Self.aggregate(devices), &fed)
            }
            return registry.emitToString()
        }
    }

    /// One device's (or the fleet's summed) series; every family gets its series even at zero.
    private func write(_ d: DeviceGauges, _ fed: inout [ObjectIdentifier: Int64]) {
        let l = labels(d.devId)
        for outcome in Self.outcomes {
            _ = registry.makeCounter(descriptor: Family.calls.descriptor, labels: l + [("outcome", outcome)])
        }
        for family in [Family.ringLatency, .answerWait, .callDuration] { _ = histogram(family, d.devId) }
        gauge(.activeCalls, l).set(Double(d.activeCalls))
        gauge(.fps, l).set(d.fps)
        gauge(.linkUp, l).set(Double(d.linksUp))
        gauge(.connected, l).set(Double(d.connected))
        feed(.framesSent, l, d.framesSent, &fed)
        feed(.framesReceived, l, d.framesReceived, &fed)
        feed(.reconnects, l, d.mqttReconnects, &fed)
        for (kind, count) in d.refusals { feed(.refused, l + [("kind", kind)], count, &fed) }
        for scope in RefusalReplyLimiter.Scope.allCases.map(\.rawValue) {
            feed(.refusalRepliesDropped, l + [("scope", scope)], d.refusalRepliesDropped[scope] ?? 0, &fed)
        }
        feed(.journalWriteFailures, l, d.journalWriteFailures, &fed)
        gauge(.cameraUp, l).set(Double(d.camerasUp ?? (d.cameraUp ? 1 : 0)))
        feed(.cameraLosses, l, d.cameraLosses, &fed)
        writeDoorbell(d.doorbell, l, &fed)
    }

    /// Brings a counter that mirrors a device's own monotonic count up to `value`. A count that
    /// went down (a device replaced under the same devId) starts the series over, as a restarted
    /// process's counter does.
    /// `fed`: the last values written (`fedCounters`, held by the scrape).
    func feed(_ family: Family, _ labels: [(String, String)], _ value: Int, _ fed: inout [ObjectIdentifier: Int64]) {
        let counter = registry.makeCounter(descriptor: family.descriptor, labels: labels)
        let id = ObjectIdentifier(counter)
        let target = Int64(max(0, value))
        let last = fed[id] ?? 0
        if target >= last {
            counter.increment(by: target - last)
        } else {
            counter.reset()
            counter.increment(by: target)
        }
        fed[id] = target
    }

    private func gauge(_ family: Family, _ labels: [(String, String)]) -> Gauge {
        registry.makeGauge(descriptor: family.descriptor, labels: labels)
    }

    private func histogram(_ family: Family, _ device: String) -> ValueHistogram {
        registry.makeValueHistogram(descriptor: family.descriptor, labels: labels(device), buckets: family.buckets)
    }

    /// The `device` label, or none when the series are the fleet's.
    private func labels(_ device: String) -> [(String, String)] {
        perDevice ? [("device", device)] : []
    }

    static let outcomes: [String] = [
        CallOutcome.hungUp, .cancelled, .rejected, .busy, .notAnswered, .answeredElsewhere, .rejectedElsewhere, .stopped,
    ].map(\.rawValue)

    /// A number as Prometheus and the JSON views print it: whole values without a fraction.
    public static func number(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    // MARK: Families

    /// Every metric family: its name (namespace `ipcemu`, unit suffix by Prometheus convention),
    /// its help text and, for histograms, its buckets.
    struct Family: Sendable {
        var name: String
        var unit: String
        var help: String
        var buckets: [Double] = []

        var descriptor: MetricNameDescriptor {
            MetricNameDescriptor(namespace: "ipcemu", metricName: name, unitName: unit, helpText: help)
        }

        static let devices = Family(name: "devices", unit: "", help: "Devices in this process.")
        static let calls = Family(name: "calls", unit: "total", help: "Calls ended, by outcome.")
        static let ringLatency = Family(name: "call_ring_latency", unit: "seconds",
                                        help: "Incoming calls: time from receiving call to sending ring.",
                                        buckets: ControlMetrics.ringLatencyBuckets)
        static let answerWait = Family(name: "call_answer_wait", unit: "seconds",
                                       help: "Answered calls: time from the call's start to its answer.",
                                       buckets: ControlMetrics.answerWaitBuckets)
        static let callDuration = Family(name: "call_duration", unit: "seconds",
                                         help: "Answered calls: time from the answer to the end of the call.",
                                         buckets: ControlMetrics.callDurationBuckets)
        static let activeCalls = Family(name: "active_calls", unit: "", help: "Calls in progress (ringing or answered).")
        static let framesSent = Family(name: "media_frames_sent", unit: "total", help: "Video frames sent over the P2P link.")
        static let framesReceived = Family(name: "media_frames_received", unit: "total",
                                           help: "Video frames received over the P2P link.")
        static let fps = Family(name: "media_fps", unit: "", help: "Frames per second sent.")
        static let linkUp = Family(name: "p2p_link_up", unit: "",
                                   help: "1 while the P2P media link of the answered call is up (a fleet: links up).")
        static let connected = Family(name: "mqtt_connected", unit: "",
                                      help: "1 while the device's MQTT connection is up (a fleet: devices connected).")
        static let reconnects = Family(name: "mqtt_reconnects", unit: "total", help: "MQTT connections accepted after the first one.")
        static let refused = Family(name: "refused_messages", unit: "total",
                                    help: "Messages refused (logged and dropped, or answered with a refusal), by kind.")
        static let refusalRepliesDropped = Family(name: "refusal_replies_dropped", unit: "total",
                                                  help: "Replies to refused messages not sent (PROTOCOL.md 3.4: over 5 a second per sender or 50 a second per device), by the limit that dropped them.")
        static let journalWriteFailures = Family(name: "journal_write_failures", unit: "total",
                                                 help: "Journal lines that could not be written whole (disk full...).")
        static let cameraUp = Family(name: "camera_up", unit: "",
                                     help: "0 while the camera's capture reports no video (unplugged...), else 1 (a fleet: devices whose camera is up).")
        static let cameraLosses = Family(name: "camera_losses", unit: "total",
                                         help: "Times the camera stopped delivering video during a stream.")
    }
}
