import ControlAPI
import Testing

/// PROTOCOL.md 3.4 (issue 23): replies to refused messages dropped by the limits, in `/metrics`.
@Suite("Metrics: refusal replies dropped")
struct RefusalReplyMetricsTests {
    func gauges(_ devId: String, sender: Int, device: Int) -> ControlMetrics.DeviceGauges {
        var g = ControlMetrics.DeviceGauges(devId: devId, activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: true)
        g.refusalRepliesDropped = ["sender": sender, "device": device]
        return g
    }

    @Test("a counter per device and scope, both scopes present at zero; fed up to the device's counts")
    func perDevice() throws {
        let metrics = ControlMetrics(perDevice: true)
        let zero = try PrometheusText(metrics.render([ControlMetrics.DeviceGauges(
            devId: "d1", activeCalls: 0, p2pLinkUp: false, mqttReconnects: 0, mqttConnected: true)]))
        #expect(zero.types["ipcemu_refusal_replies_dropped_total"] == "counter")
        #expect(zero.value("ipcemu_refusal_replies_dropped_total", ["device": "d1", "scope": "sender"]) == 0)
        #expect(zero.value("ipcemu_refusal_replies_dropped_total", ["device": "d1", "scope": "device"]) == 0)
        _ = metrics.render([gauges("d1", sender: 3, device: 10)])
        let m = try PrometheusText(metrics.render([gauges("d1", sender: 5, device: 60)]))
        #expect(m.value("ipcemu_refusal_replies_dropped_total", ["device": "d1", "scope": "sender"]) == 5)
        #expect(m.value("ipcemu_refusal_replies_dropped_total", ["device": "d1", "scope": "device"]) == 60)
    }

    @Test("a fleet's series sums its devices")
    func fleet() throws {
        let metrics = ControlMetrics(perDevice: false)
        let m = try PrometheusText(metrics.render([gauges("a", sender: 1, device: 2), gauges("b", sender: 4, device: 8)]))
        #expect(m.value("ipcemu_refusal_replies_dropped_total", ["scope": "sender"]) == 5)
        #expect(m.value("ipcemu_refusal_replies_dropped_total", ["scope": "device"]) == 10)
    }
}
