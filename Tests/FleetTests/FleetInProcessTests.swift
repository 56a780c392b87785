import AppSimulator
import CallRuntime
import CallEngine
import ControlAPI
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Fleets inside the test process, driven through MQTT as users would. Kept to about 100 devices
/// at a time: each holds a descriptor (3 where libmosquitto's socketpair stays open), and Foundation's `Process.run()` (used by other suites
/// running in parallel) crashes when the process has more than about 1,000 open. Hundreds of
/// devices per process are covered through `ipcemu fleet` (FleetCommandTests).
@Suite("Fleet in one process", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetInProcessTests {
    func makeFleet(_ broker: MosquittoBroker, groups: [FleetPlan.Group], policy: DeviceProfile.AnswerPolicy? = nil)
        throws -> Fleet {
        let plan = try FleetPlan(groups: groups)
        return try Fleet(plan: plan, positions: 0..<plan.total,
                         options: Fleet.Options(connection: broker.clientOptions(clientID: "fleet"), answerPolicy: policy))
    }

    @Test("100 devices from two templates come online; calls to random devices are answered per policy; stop sends every one offline")
    func mixedFleetAnswersCalls() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        // Doorbells answer at once; panels (manual in their profile) are set to reject.
        var panel = try panelTemplate()
        panel.behaviour.answerPolicy = .reject
        var door = try doorbellTemplate()
        door.behaviour.answerPolicy = .answer(afterSeconds: 0)
        let fleet = try makeFleet(broker, groups: [.init(profile: door, count: 80), .init(profile: panel, count: 20)])
        let report = await fleet.start()
        #expect(report.online == 100, "\(report)")
        #expect(report.shortage == nil)
        let ids = Set(fleet.devices.map(\.devId))
        #expect(ids.count == 100)
        #expect(await eventually(timeout: .seconds(10)) { presence.online.isSuperset(of: ids) })

        let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "alice"))
        try await app.start()
        var events = await app.events().makeAsyncIterator()
        var rng = SystemRandomNumberGenerator()
        var answered = 0, rejected = 0
        for _ in 0..<12 {
            let target = try #require(fleet.devices.randomElement(using: &rng))
            try await app.add(DeviceAddress(devId: target.devId))
            try await app.startCall(devId: target.devId, timeoutSeconds: 10)
            var outcome: CallEvent?
            while let e = await events.next() {
                if case .received(let m, _) = e, m.event == .answer || m.event == .reject {
                    outcome = m.event
                    if m.event == .answer { try await app.hangUp() }
                }
                if case .callEnded = e { break }
            }
            if target.devId.hasPrefix("door") {
                #expect(outcome == .answer, "\(target.devId)")
                answered += 1
            } else {
                #expect(outcome == .reject, "\(target.devId)")
                rejected += 1
            }
        }
        #expect(answered + rejected == 12)
        await app.stop()

        let took = await fleet.stop()
        #expect(took < .seconds(5))
        #expect(await eventually(timeout: .seconds(10)) { presence.offline.isSuperset(of: ids) },
                "still online: \(ids.subtracting(presence.offline).prefix(5))")
    }

    @Test("Reconnect storm: every device drops its MQTT connection and all of them come back, with jitter")
    func reconnectStorm() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let fleet = try makeFleet(broker, groups: [.init(profile: try doorbellTemplate(prefix: "storm"), count: 80)])
        let report = await fleet.start()
        #expect(report.online == 80)
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 80 })
        let dropped = await fleet.dropAllConnections(seconds: 0.3, jitterSeconds: 1.0)
        #expect(dropped == 80)
        // The wills prove the drop happened (offline seen), then every device is back.
        #expect(await eventually(timeout: .seconds(10)) { presence.offline.count >= 50 })
        var back = false
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if fleet.devices.allSatisfy({ $0.mqttCounters.reconnects >= 1 }), await fleet.onlineCount() == 80,
               presence.online.count == 80 { back = true; break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(back, "reconnected: \(fleet.devices.filter { $0.mqttCounters.reconnects >= 1 }.count), online: \(presence.online.count)")
        await fleet.stop()
    }

    @Test("Fleet-wide faults log one summary line per action; each device's lines are debug")
    func fleetFaultsLogOneLinePerAction() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let path = dir.path + "/fleet.log"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let log = EventLog(minimumLevel: .debug, fileDescriptor: fd)
        let plan = try FleetPlan(groups: [.init(profile: try doorbellTemplate(prefix: "quiet"), count: 20)])
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total,
                              options: Fleet.Options(connection: broker.clientOptions(clientID: "fleet"), log: log))
        #expect(await fleet.start().online == 20)
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 20 })
        #expect(await fleet.dropAllConnections(seconds: 0.2, jitterSeconds: 0.2) == 20)
        // Every will seen (the drops happened), then every device back.
        #expect(await eventually(timeout: .seconds(10)) { presence.offline.count == 20 })
        #expect(await eventually(timeout: .seconds(20)) { presence.online.count == 20 })
        #expect(await fleet.suppressHeartbeatReplies(fraction: 0.5) == 10)
        await fleet.stop()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let warnings = lines.filter { $0.contains(" WARNI ") }
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.filter { $0.contains("fleet fault: dropping every device's MQTT connection") && $0.contains("devices=20") }.count == 1)
        #expect(warnings.filter { $0.contains("fleet fault: heartbeat replies suppressed") && $0.contains("suppressing=10") }.count == 1)
        let debug = lines.filter { $0.contains(" DEBUG ") }
        #expect(debug.filter { $0.contains("fault: dropping the MQTT connection") }.count == 20)
        #expect(debug.filter { $0.contains("broker unreachable") }.count == 20)
        #expect(debug.filter { $0.contains("faults set") }.count == 20)
    }

    @Test("Per-device credentials on a broker with a password file: every device signs in as itself")
    func perDeviceCredentials() async throws {
        var users: [String: String] = [:]
        for i in 0..<20 { users[String(format: "cred-%04d", i)] = "pw-\(i)-secret" }
        users["watcher"] = "watch"
        let broker = try await startBroker(MosquittoBroker.Configuration(users: users))
        defer { broker.stop() }
        var template = try doorbellTemplate(prefix: "cred")
        template.broker.username = "{devId}"
        template.broker.password = "pw-{index}-secret"
        let fleet = try makeFleet(broker, groups: [.init(profile: template, count: 20)])
        let report = await fleet.start(stallTimeout: .seconds(10))
        #expect(report.online == 20, "\(report)")
        // A device whose password is wrong stays offline (the broker really checks).
        template.broker.password = "wrong-{index}"
        let bad = try makeFleet(broker, groups: [.init(profile: template, count: 1)])
        let badReport = await bad.start(stallTimeout: .seconds(2))
        #expect(badReport.online == 0)
        await bad.stop()
        await fleet.stop()
    }

    @Test("Control plane: /api/devices paged and filtered, /metrics aggregated, fleet faults, one journal file with every devId")
    func controlPlane() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        var door = try doorbellTemplate(prefix: "ctl")
        door.behaviour.answerPolicy = .answer(afterSeconds: 0)
        let fleet = try makeFleet(broker, groups: [.init(profile: door, count: 40), .init(profile: try panelTemplate(prefix: "ctp"), count: 20)])
        _ = await fleet.start()
        let journal = try JournalFile(directory: dir.path, name: "fleet-0-60")
        let registry = DeviceRegistry(metrics: ControlMetrics(perDevice: false), fleetJournal: journal)
        await registry.setFleet(fleet)
        for d in fleet.devices { try await registry.add(d) }
        let server = try ControlServer(configuration: ControlServerConfiguration(host: "127.0.0.1", port: 0), registry: registry,
                                       phone: nil, log: EventLog(minimumLevel: .error))
        try await server.start()
        let http = try ControlHTTPClient(baseURL: server.url, token: nil)

        // Paging: 60 devices, pages of 25.
        let page = try await http.request("GET", "/api/devices?offset=50&limit=25")
        #expect(page.status == 200)
        #expect(page.json?["total"]?.int == 60)
        #expect(page.json?["devices"]?.array?.count == 10)
        let panels = try await http.request("GET", "/api/devices?prefix=ctp-&limit=100")
        #expect(panels.json?["total"]?.int == 20)
        let bad = try await http.request("GET", "/api/devices?limit=0")
        #expect(bad.status == 400)

        // Two calls to two devices: the journal file holds both devIds, and the ring latency counts both.
        let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "alice"))
        try await app.start()
        var events = await app.events().makeAsyncIterator()
        for target in ["ctl-0001", "ctl-0002"] {
            try await app.add(DeviceAddress(devId: target))
            try await app.startCall(devId: target, timeoutSeconds: 10)
            while let e = await events.next() {
                if case .received(let m, _) = e, m.event == .answer { try await app.hangUp() }
                if case .callEnded = e { break }
            }
        }
        // The app's call ends when it sends hang_up; the device ends its session when that arrives.
        #expect(await eventually(timeout: .seconds(5)) {
            let idle = try? await http.request("GET", "/api/devices?phase=idle&limit=100")
            return idle?.json?["total"]?.int == 60
        }, "every device back to idle after the two calls")
        #expect(await eventually(timeout: .seconds(5)) {
            let text = (try? String(contentsOfFile: journal.path, encoding: .utf8)) ?? ""
            return text.contains(#""device":"ctl-0001""#) && text.contains(#""device":"ctl-0002""#)
        })
        let metrics = try await http.request("GET", "/metrics")
        #expect(metrics.text.contains("ipcemu_devices 60"))
        #expect(metrics.text.contains("ipcemu_mqtt_connected 60"))
        #expect(metrics.text.contains("ipcemu_call_ring_latency_seconds_count 2"))
        #expect(!metrics.text.contains("device=\""), "aggregated metrics carry no device label")

        // Fleet-wide faults.
        let hb = try await http.request("PUT", "/api/fleet/faults/heartbeats", json: JSONValue.object(["suppressFraction": .double(0.5)]))
        #expect(hb.status == 200)
        #expect(hb.json?["suppressing"]?.int == 30)
        let summary = try await http.request("GET", "/api/fleet")
        #expect(summary.json?["devices"]?.int == 60)

        await app.stop()
        await server.stop()
        await registry.close()
        await fleet.stop()
    }
}
