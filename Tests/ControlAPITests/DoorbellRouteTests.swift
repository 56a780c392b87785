import AppSimulator
import CallEngine
import ControlAPI
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    /// PROTOCOL.md 8 on the control API: state, DPs, motion, wake, battery, push faults, the
    /// journal's doorbell entries and the doorbell metrics, against a live server and a device on
    /// a real mosquitto.
    @Suite("Doorbell routes") struct DoorbellRoutes {
        static func profile(_ file: String, _ edit: (inout DeviceProfile) -> Void = { _ in }) throws -> DeviceProfile {
            var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/" + file)
            edit(&p)
            return p
        }

        @Test("state names kind, power, battery and DPs; GET/PUT /dps: typed values, 400 naming the DP, nothing changed")
        func dataPoints() async throws {
            let p = try Self.profile("battery-doorbell.yaml") { $0.power.sleepAfter = 600 }
            try await withControl(edit: { $0 = p }) { f in
                let state = try await f.request("GET", f.base)
                #expect(state.status == 200)
                #expect(state.json?["kind"]?.string == "doorbell")
                #expect(state.json?["power"]?.string == "awake")
                #expect(state.json?["lowPower"]?.bool == true)
                #expect(state.json?["battery"]?.int == 100)
                #expect(state.json?["dps"]?["149"]?.bool == true)
                #expect(state.json?["doorbellCounters"]?["presses"]?.int == 0)

                let list = try await f.request("GET", f.base + "/dps")
                #expect(list.status == 200)
                let dps = list.json?["dps"]?.array ?? []
                let awake = dps.first { $0["id"]?.int == 149 }
                #expect(awake?["code"]?.string == "wireless_awake")
                #expect(awake?["access"]?.string == "rw")
                #expect(awake?["value"]?.bool == true)
                #expect(dps.first { $0["id"]?.int == 136 }?["access"]?.string == "ro")

                let (_, events) = try await f.app("user-alice")
                let set = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["134": .bool(false), "147": .int(30)])]))
                #expect(set.status == 200)
                #expect(set.json?["dps"]?.array?.first { $0["id"]?.int == 147 }?["value"]?.int == 30)
                #expect(await f.device.dataPointValues.contains(DPEntry(id: 134, value: .bool(false))))
                // Reported over protocol 4: the app's cache sees both.
                let report = await events.first { e -> [DPId: DPValue]? in
                    if case .dpReport(_, let dps) = e, dps[147] != nil { dps } else { nil }
                }
                #expect(report?[147] == .int(30) && report?[134] == .bool(false))

                let wrongType = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["134": .bool(true), "147": .string("x")])]))
                #expect(wrongType.status == 400)
                #expect(wrongType.json?["field"]?.string?.contains("147") == true, "\(wrongType.text)")
                #expect(await f.device.dataPointValues.contains(DPEntry(id: 134, value: .bool(false))), "nothing changed")
                let outOfRange = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["145": .int(101)])]))
                #expect(outOfRange.status == 400 && outOfRange.json?["field"]?.string == "dps.145")
                let unknown = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["999": .int(1)])]))
                // Not a settable DP of PROTOCOL.md 8.3: the schema's decoder refuses it (it names `dps`:
                // RequestGuards skips coding keys that read as integers).
                #expect(unknown.status == 400 && unknown.json?["field"]?.string?.hasPrefix("dps") == true, "\(unknown.text)")
                let notId = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["abc": .int(1)])]))
                #expect(notId.status == 400 && notId.json?["field"]?.string?.contains("abc") == true, "\(notId.text)")
                let readOnlyResult = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["212": .string("")])]))
                #expect(readOnlyResult.status == 400, "the device's own results cannot be set: \(readOnlyResult.text)")
                let sleep = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["149": .bool(false)])]))
                #expect(sleep.status == 409 && sleep.json?["field"]?.string == "dps.149")
                let battery = try await f.request("PUT", f.base + "/dps", .object(["dps": .object(["145": .int(55)])]))
                #expect(battery.status == 200 && battery.json?["dps"]?.array?.first { $0["id"]?.int == 145 }?["value"]?.int == 55)
                #expect(await f.device.batteryPercent == 55, "DP 145 goes through the battery")
                let empty = try await f.request("PUT", f.base + "/dps", .object(["dps": .object([:])]))
                #expect(empty.status == 400 && empty.json?["field"]?.string == "dps")
                let nobody = try await f.request("GET", "/api/devices/nobody/dps")
                #expect(nobody.status == 404 && nobody.json?["field"]?.string == "devId")
            }
        }

        @Test("motion returns the snapshot's path, served by the media route; DP 115 and 212 ipc_motion reported")
        func motion() async throws {
            let p = try Self.profile("ac-doorbell.yaml")
            try await withControl(edit: { $0 = p }) { f in
                let reply = try await f.request("POST", f.base + "/motion")
                #expect(reply.status == 200)
                let path = try #require(reply.json?["path"]?.string)
                #expect(path.hasPrefix(f.base + "/media/"))
                let image = try await f.request("GET", path)
                #expect(image.status == 200 && image.headers["content-type"] == "image/jpeg")
                #expect(image.body.prefix(2) == [0xFF, 0xD8])
                let dps = await f.device.dataPointValues
                guard case .string(let alert)? = dps.first(where: { $0.id == 212 })?.value,
                      let data = Data(base64Encoded: alert),
                      let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    Issue.record("DP 212 is not base64 JSON")
                    return
                }
                #expect(json["cmd"] as? String == "ipc_motion")
            }
        }

        @Test("wake: asleep -> waking -> awake (journal: a wake with its latency); battery: DP 145, 400 out of range")
        func wakeAndBattery() async throws {
            let p = try Self.profile("battery-doorbell.yaml") {
                $0.power.sleepAfter = 0.3
                $0.power.wakeLatency = 0.3
            }
            try await withControl(edit: { $0 = p }) { f in
                let events = Recorder(await f.device.events())
                #expect(await events.first(within: .seconds(5)) { $0 == .fellAsleep ? true : nil } == true)
                #expect(try await f.request("GET", f.base).json?["power"]?.string == "asleep")
                let metricsAsleep = try PrometheusText(try await f.request("GET", "/metrics").text)
                #expect(metricsAsleep.value("ipcemu_devices_asleep", ["device": f.devId]) == 1)

                let count = events.all.count
                let wake = try await f.request("POST", f.base + "/wake")
                #expect(wake.status == 202)
                #expect(wake.json?["power"]?.string == "waking")
                let latency = await events.first(after: count, within: .seconds(5)) { e -> Int64? in
                    if case .wokeUp(let ms) = e { ms } else { nil }
                }
                #expect((latency ?? 0) >= 250)
                #expect(try await f.request("GET", f.base).json?["power"]?.string != "asleep")
                let journal = try await f.request("GET", f.base + "/journal")
                let wakes = (journal.json?["entries"]?.array ?? []).filter { $0["kind"]?.string == "wake" }
                #expect(wakes.first?["latencyMs"]?.int == latency)

                let battery = try await f.request("POST", f.base + "/battery", .object(["percent": .int(42)]))
                #expect(battery.status == 200 && battery.json?["battery"]?.int == 42)
                #expect(await f.device.dataPointValues.contains(DPEntry(id: 145, value: .int(42))))
                let bad = try await f.request("POST", f.base + "/battery", .object(["percent": .int(101)]))
                #expect(bad.status == 400 && bad.json?["field"]?.string == "percent")
                #expect(await f.device.batteryPercent == 42)

                let metrics = try PrometheusText(try await f.request("GET", "/metrics").text)
                #expect(metrics.value("ipcemu_wakes_total", ["device": f.devId]) ?? 0 >= 1)
            }
        }

        @Test("a left message is a journal entry with its path and duration, and counted in /metrics")
        func leftMessageJournal() async throws {
            let p = try Self.profile("ac-doorbell.yaml") {
                $0.doorbell.ringTimeout = 0.5
                $0.doorbell.messageSeconds = 1
                $0.capabilities.video?.main = .init(width: 320, height: 180, fps: 10)
            }
            try await withControl(edit: { $0 = p }) { f in
                let events = Recorder(await f.device.events())
                let first = try await f.request("POST", f.base + "/press", .object([:]))
                let callId = try #require(first.json?["sessionId"]?.string)
                #expect(await events.first(within: .seconds(5)) { e -> Bool? in
                    if case .callEnded(let r) = e, r.sessionId == callId { true } else { nil }
                } == true)
                let second = try await f.request("POST", f.base + "/press", .object([:]))
                #expect(second.status == 200 && second.json?["sessionId"]?.string == callId, "inside the window: the missed call's id")
                let stored = await events.first(within: .seconds(20)) { e -> String? in
                    if case .mediaStored(let name, let path) = e, name.hasSuffix(".mp4") { path } else { nil }
                }
                let path = try #require(stored)
                try await Task.sleep(for: .milliseconds(200))
                let entries = try await f.request("GET", f.base + "/journal").json?["entries"]?.array ?? []
                let message = entries.first { $0["kind"]?.string == "message" }
                #expect(message?["path"]?.string == path)
                #expect(message?["session"]?.string == callId)
                #expect(message?["durationSeconds"]?.int == 1)
                let metrics = try PrometheusText(try await f.request("GET", "/metrics").text)
                #expect(metrics.value("ipcemu_doorbell_messages_total", ["device": f.devId]) == 1)
            }
        }

        @Test("push faults: 409 without pushes; set, read back, 400 naming the field out of range")
        func pushFaults() async throws {
            let plain = try Self.profile("ac-doorbell.yaml")
            try await withControl(edit: { $0 = plain }) { f in
                let none = try await f.request("GET", f.base + "/faults/push")
                #expect(none.status == 409)
            }
            let dir = try TemporaryDirectory(prefix: "ipcemu-apns")
            let pushing = try Self.profile("ac-doorbell.yaml") { $0.push.apnsDir = dir.path }
            try await withControl(edit: { $0 = pushing }) { f in
                let start = try await f.request("GET", f.base + "/faults/push")
                #expect(start.status == 200 && start.json?["lossShare"] != nil)
                let set = try await f.request("PUT", f.base + "/faults/push", .object(["delaySeconds": .double(1.5), "lossShare": .double(0.25)]))
                #expect(set.status == 200)
                #expect(set.json?["lossShare"] == .double(0.25))
                let back = try await f.request("GET", f.base + "/faults/push")
                #expect(back.json?["delaySeconds"] == .double(1.5))
                let bad = try await f.request("PUT", f.base + "/faults/push", .object(["lossShare": .double(2)]))
                #expect(bad.status == 400 && bad.json?["field"]?.string == "lossShare")
                #expect(await f.device.pushFaults()?.lossShare == 0.25, "nothing changed")
            }
        }

        @Test("press names the call id; a press while it rings is 409; journal and metrics count the doorbell call")
        func pressJournalMetrics() async throws {
            let p = try Self.profile("ac-doorbell.yaml") { $0.doorbell.ringTimeout = 1 }
            try await withControl(edit: { $0 = p }) { f in
                let (_, appEvents) = try await f.app("user-alice")
                let events = Recorder(await f.device.events())
                let press = try await f.request("POST", f.base + "/press", .object([:]))
                #expect(press.status == 200)
                let callId = try #require(press.json?["sessionId"]?.string)
                #expect(callId.count > 8 && callId.prefix(8).allSatisfy(\.isHexDigit))
                #expect(await appEvents.first { e -> String? in
                    if case .doorbellPressed(let m) = e { m.edata } else { nil }
                } == callId)
                let again = try await f.request("POST", f.base + "/press", .object([:]))
                #expect(again.status == 409)
                // The ring times out (1 s): the call ends not answered.
                let ended = await events.first(within: .seconds(5)) { e -> CallRecord? in
                    if case .callEnded(let r) = e { r } else { nil }
                }
                #expect(ended?.sessionId == callId && ended?.outcome == .notAnswered)
                try await Task.sleep(for: .milliseconds(100))  // the monitor journals the same event
                let entries = try await f.request("GET", f.base + "/journal").json?["entries"]?.array ?? []
                let call = entries.first { $0["kind"]?.string == "call" && $0["session"]?.string == callId }
                #expect(call?["doorbellKind"]?.string == "ac_doorbell")
                #expect(call?["outcome"]?.string == "notAnswered")
                #expect(entries.contains { $0["event"]?.string == "press" && $0["session"]?.string == callId })
                #expect(entries.contains { $0["event"]?.string == "timeout" && $0["direction"]?.string == "out" })

                let metrics = try PrometheusText(try await f.request("GET", "/metrics").text)
                #expect(metrics.value("ipcemu_doorbell_presses_total", ["device": f.devId]) == 1)
                #expect(metrics.value("ipcemu_doorbell_presses_ignored_total", ["device": f.devId]) == 1)
                #expect((metrics.value("ipcemu_dp_reports_total", ["device": f.devId]) ?? 0) >= 1)
                #expect(metrics.value("ipcemu_devices_asleep", ["device": f.devId]) == 0)
                for name in ["ipcemu_wakes_total", "ipcemu_bad_wakes_total", "ipcemu_dropped_while_asleep_total",
                             "ipcemu_dp_refusals_total", "ipcemu_doorbell_messages_total", "ipcemu_push_failures_total",
                             "ipcemu_stream_control_refusals_total"] {
                    #expect(metrics.value(name, ["device": f.devId]) == 0, "\(name)")
                }
            }
        }
    }
}
