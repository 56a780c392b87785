import CallEngine
import Foundation

/// The counters and histograms the control layer keeps (gauges are read from the devices when
/// /metrics is scraped). Rendered in the Prometheus text exposition format 0.0.4.
public final class ControlMetrics: @unchecked Sendable {
    /// Upper bounds (seconds) of the call -> ring latency histogram.
    public static let ringLatencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private let lock = NSLock()
    private var callsByOutcome: [String: [String: Int]] = [:]   // device -> outcome -> count
    private var ringLatency: [String: Histogram] = [:]

    struct Histogram {
        var bucketCounts = [Int](repeating: 0, count: ControlMetrics.ringLatencyBuckets.count)
        var count = 0
        var sum = 0.0
    }

    /// One series per device (`device` label), or (false, a fleet's default) one series for all.
    public let perDevice: Bool

    public init(perDevice: Bool = true) {
        self.perDevice = perDevice
    }

    /// Where a device's counts go: its own series, or the fleet's one.
    private func key(_ device: String) -> String { perDevice ? device : "" }

    public func callEnded(device: String, outcome: CallOutcome) {
        lock.withLock { callsByOutcome[key(device), default: [:]][outcome.rawValue, default: 0] += 1 }
    }

    /// Incoming call: from receiving `call` to sending `ring`.
    public func observeRingLatency(device: String, seconds: Double) {
        let device = key(device)
        lock.withLock {
            var h = ringLatency[device] ?? Histogram()
            for (i, bound) in Self.ringLatencyBuckets.enumerated() where seconds <= bound { h.bucketCounts[i] += 1 }
            h.count += 1
            h.sum += seconds
            ringLatency[device] = h
        }
    }

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
        /// Journal lines that could not be written whole (disk full...), issue 10.
        public var journalWriteFailures = 0
        /// Devices these gauges sum (1 for one device).
        var fleetSize = 1
        var linksUp = 0
        var connected = 0
    }

    /// One series for the whole fleet: sums (active calls, links up, devices connected...).
    static func aggregate(_ devices: [DeviceGauges]) -> DeviceGauges {
        var sum = DeviceGauges(devId: "", activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: false)
        var linksUp = 0
        var connected = 0
        for d in devices {
            sum.activeCalls += d.activeCalls
            sum.mqttReconnects += d.mqttReconnects
            sum.framesSent += d.framesSent
            sum.framesReceived += d.framesReceived
            sum.fps += d.fps
            for (kind, count) in d.refusals { sum.refusals[kind, default: 0] += count }
            sum.journalWriteFailures += d.journalWriteFailures
            if d.p2pLinkUp { linksUp += 1 }
            if d.mqttConnected { connected += 1 }
        }
        sum.fleetSize = devices.count
        sum.linksUp = linksUp
        sum.connected = connected
        return sum
    }

    /// The whole exposition for these devices.
    public func render(_ devices: [DeviceGauges]) -> String {
        let (calls, latency) = lock.withLock { (callsByOutcome, ringLatency) }
        var out = ""
        let devices = perDevice ? devices : [Self.aggregate(devices)]
        if !perDevice {
            out += "# HELP ipcemu_devices Devices in this process.\n# TYPE ipcemu_devices gauge\n"
            out += "ipcemu_devices \(devices.first.map { $0.fleetSize } ?? 0)\n"
        }
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
            // Aggregated (a fleet): no device label.
            let labels = labels.filter { !($0.0 == "device" && $0.1.isEmpty) }
            let l = labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",")
            out += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(l)} \(value)\n"
        }
        header("ipcemu_calls_total", "counter", "Calls ended, by outcome.")
        for d in devices {
            for outcome in Self.outcomes {
                sample("ipcemu_calls_total", [("device", d.devId), ("outcome", outcome)], String(calls[d.devId]?[outcome] ?? 0))
            }
        }
        header("ipcemu_call_ring_latency_seconds", "histogram",
               "Incoming calls: time from receiving call to sending ring.")
        for d in devices {
            let h = latency[d.devId] ?? Histogram()
            for (i, bound) in Self.ringLatencyBuckets.enumerated() {
                sample("ipcemu_call_ring_latency_seconds_bucket", [("device", d.devId), ("le", Self.number(bound))],
                       String(h.bucketCounts[i]))
            }
            sample("ipcemu_call_ring_latency_seconds_bucket", [("device", d.devId), ("le", "+Inf")], String(h.count))
            sample("ipcemu_call_ring_latency_seconds_sum", [("device", d.devId)], Self.number(h.sum))
            sample("ipcemu_call_ring_latency_seconds_count", [("device", d.devId)], String(h.count))
        }
        header("ipcemu_active_calls", "gauge", "Calls in progress (ringing or answered).")
        for d in devices { sample("ipcemu_active_calls", [("device", d.devId)], String(d.activeCalls)) }
        header("ipcemu_media_frames_sent_total", "counter", "Video frames sent over the P2P link.")
        for d in devices { sample("ipcemu_media_frames_sent_total", [("device", d.devId)], String(d.framesSent)) }
        header("ipcemu_media_frames_received_total", "counter", "Video frames received over the P2P link.")
        for d in devices { sample("ipcemu_media_frames_received_total", [("device", d.devId)], String(d.framesReceived)) }
        header("ipcemu_media_fps", "gauge", "Frames per second sent.")
        for d in devices { sample("ipcemu_media_fps", [("device", d.devId)], Self.number(d.fps)) }
        header("ipcemu_p2p_link_up", "gauge", "1 while the P2P media link of the answered call is up.")
        for d in devices { sample("ipcemu_p2p_link_up", [("device", d.devId)], perDevice ? (d.p2pLinkUp ? "1" : "0") : String(d.linksUp)) }
        header("ipcemu_mqtt_connected", "gauge", "1 while the device's MQTT connection is up.")
        for d in devices { sample("ipcemu_mqtt_connected", [("device", d.devId)], perDevice ? (d.mqttConnected ? "1" : "0") : String(d.connected)) }
        header("ipcemu_mqtt_reconnects_total", "counter", "MQTT connections accepted after the first one.")
        for d in devices { sample("ipcemu_mqtt_reconnects_total", [("device", d.devId)], String(d.mqttReconnects)) }
        header("ipcemu_refused_messages_total", "counter",
               "Messages refused (logged and dropped, or answered with a refusal), by kind.")
        for d in devices {
            for (kind, count) in d.refusals.sorted(by: { $0.key < $1.key }) {
                sample("ipcemu_refused_messages_total", [("device", d.devId), ("kind", kind)], String(count))
            }
        }
        header("ipcemu_journal_write_failures_total", "counter", "Journal lines that could not be written whole (disk full...).")
        for d in devices { sample("ipcemu_journal_write_failures_total", [("device", d.devId)], String(d.journalWriteFailures)) }
        return out
    }

    static let outcomes: [String] = [
        CallOutcome.hungUp, .cancelled, .rejected, .busy, .notAnswered, .answeredElsewhere, .rejectedElsewhere, .stopped,
    ].map(\.rawValue)

    static func number(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
