import CallEngine
import ControlAPI
import IPCWire
import Testing

/// `ControlMetrics` on its own (no server): each instance has its own swift-prometheus registry, the
/// histograms carry their documented buckets, and counters fed from the devices' counts follow them.
@Suite("Metrics registry")
struct MetricsRegistryTests {
    func answered(start: Int64, answer: Int64, end: Int64) -> CallRecord {
        CallRecord(sessionId: "s", role: .device, direction: .incoming, localId: "dev", peers: ["u"], answeredBy: "u",
                   callType: .oneToOne, startedAt: start, answeredAt: answer, endedAt: end, outcome: .hungUp, endedBy: .remote,
                   reason: nil, remoteReason: nil, sdkError: nil)
    }

    @Test("an answered call observes its wait for the answer and its length, in seconds, in the documented buckets")
    func answeredCallHistograms() throws {
        let metrics = ControlMetrics(perDevice: true)
        metrics.callEnded(device: "dev", record: answered(start: 1_000, answer: 3_000, end: 48_000))
        let m = try PrometheusText(metrics.render([ControlMetrics.DeviceGauges(
            devId: "dev", activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: true)]))
        let d = ["device": "dev"]
        #expect(m.types["ipcemu_call_answer_wait_seconds"] == "histogram")
        #expect(m.types["ipcemu_call_duration_seconds"] == "histogram")
        #expect(m.value("ipcemu_call_answer_wait_seconds_sum", d) == 2)
        #expect(m.value("ipcemu_call_answer_wait_seconds_bucket", ["device": "dev", "le": "1.0"]) == 0)
        #expect(m.value("ipcemu_call_answer_wait_seconds_bucket", ["device": "dev", "le": "2.5"]) == 1)
        #expect(m.value("ipcemu_call_duration_seconds_sum", d) == 45)
        #expect(m.value("ipcemu_call_duration_seconds_bucket", ["device": "dev", "le": "30.0"]) == 0)
        #expect(m.value("ipcemu_call_duration_seconds_bucket", ["device": "dev", "le": "60.0"]) == 1)
        #expect(m.value("ipcemu_calls_total", ["device": "dev", "outcome": "hungUp"]) == 1)
        let buckets = m.samples.filter { $0.name == "ipcemu_call_ring_latency_seconds_bucket" }.compactMap { $0.labels["le"] }
        #expect(buckets.count == ControlMetrics.ringLatencyBuckets.count + 1, "every bound and +Inf, even before any call")
    }

    @Test("two instances count apart; counters fed from the devices follow their counts")
    func instancesAreIndependent() throws {
        let a = ControlMetrics(perDevice: false)
        let b = ControlMetrics(perDevice: false)
        a.callEnded(device: "x", outcome: .busy)
        func gauges(_ reconnects: Int, refused: Int) -> [ControlMetrics.DeviceGauges] {
            [ControlMetrics.DeviceGauges(devId: "x", activeCalls: 1, p2pLinkUp: true, mqttReconnects: reconnects,
                                         mqttConnected: true, framesSent: 10, refusals: ["malformed": refused])]
        }
        _ = try PrometheusText(a.render(gauges(2, refused: 3)))
        let first = try PrometheusText(a.render(gauges(5, refused: 3)))
        #expect(first.value("ipcemu_mqtt_reconnects_total", [:]) == 5, "fed up to the device's count, not added twice")
        #expect(first.value("ipcemu_refused_messages_total", ["kind": "malformed"]) == 3)
        #expect(first.value("ipcemu_calls_total", ["outcome": "busy"]) == 1)
        #expect(first.value("ipcemu_devices", [:]) == 1)
        #expect(first.value("ipcemu_p2p_link_up", [:]) == 1)
        let other = try PrometheusText(b.render([]))
        #expect(other.value("ipcemu_calls_total", ["outcome": "busy"]) == 0)
        #expect(other.value("ipcemu_devices", [:]) == 0)
        // A device replaced under the same id (its count starts again) starts the series over.
        let replaced = try PrometheusText(a.render(gauges(1, refused: 0)))
        #expect(replaced.value("ipcemu_mqtt_reconnects_total", [:]) == 1)
    }

    @Test("camera: one device's series is 1 or 0; a fleet's counts the cameras up and sums the losses")
    func cameraGauges() throws {
        func device(_ id: String, up: Bool, losses: Int) -> ControlMetrics.DeviceGauges {
            var g = ControlMetrics.DeviceGauges(devId: id, activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: true)
            g.cameraUp = up
            g.cameraLosses = losses
            return g
        }
        let devices = [device("a", up: true, losses: 1), device("b", up: false, losses: 2), device("c", up: true, losses: 0)]
        let each = try PrometheusText(ControlMetrics(perDevice: true).render(devices))
        #expect(each.value("ipcemu_camera_up", ["device": "a"]) == 1)
        #expect(each.value("ipcemu_camera_up", ["device": "b"]) == 0)
        #expect(each.value("ipcemu_camera_losses_total", ["device": "b"]) == 2)
        let fleet = try PrometheusText(ControlMetrics(perDevice: false).render(devices))
        #expect(fleet.value("ipcemu_camera_up", [:]) == 2)
        #expect(fleet.value("ipcemu_camera_losses_total", [:]) == 3)
        let lostOnly = try PrometheusText(ControlMetrics(perDevice: false).render([device("b", up: false, losses: 1)]))
        #expect(lostOnly.value("ipcemu_camera_up", [:]) == 0, "a fleet of one whose camera is lost")
    }
}
