import AppSimulator
import CallEngine
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Devices that reach their broker over Unix domain sockets (docs/fleet.md "Devices over Unix
/// sockets"), apps over the broker's TCP port, against real mosquittos.
@Suite("Devices over Unix sockets", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetUnixSocketTests {
    @Test("A device over unix:// is online with its retained meta, is called by an app over TCP and rings")
    func deviceRings() async throws {
        let broker = try await startBroker(MosquittoBroker.Configuration(unixSockets: 1))
        defer { broker.stop() }
        var profile = try DeviceProfile.load(path: packageRootPath + "/device-profiles/doorbell.yaml")
        profile.identity.devId = "ux-door-1"
        profile.behaviour.answerPolicy = .manual
        let topics = profile.resolvedTopics
        let device = try Device(profile: profile, connection: MQTTClientOptions(brokerURL: broker.unixURLs[0], clientID: "ux-door-1"))
        let deviceEvents = await device.events()
        try await device.start()
        #expect(await device.waitUntilConnected(timeout: .seconds(10)))
        let socketURL = broker.unixURLs[0]
        #expect(await first(deviceEvents) { if case .connection(true, socketURL) = $0 { true } else { false } } != nil)
        // Subscribed after the device went online: what arrives is what the broker retained.
        let watcher = try await MessageCollector.start(broker: broker, filters: [topics.meta, topics.online])
        defer { Task { await watcher.stop() } }
        let online = await watcher.waitForMessages(count: 1, topic: topics.online)
        #expect(online.first?.retain == true && online.first?.payloadText.contains(#""online":true"#) == true, "\(online)")
        #expect(await watcher.waitForMessages(count: 1, topic: topics.meta).first?.retain == true)

        let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "ux-alice"))
        try await app.start()
        let appEvents = await app.events()
        try await app.add(DeviceAddress(devId: profile.identity.devId))
        let sessionId = try await app.startCall(devId: profile.identity.devId, timeoutSeconds: 10)
        #expect(await first(deviceEvents) { if case .ringing(sessionId) = $0 { true } else { false } } != nil)
        #expect(await first(appEvents) { if case .deviceRinging(sessionId, _) = $0 { true } else { false } } != nil)
        try await app.hangUp()
        await app.stop()
        await device.stop()
        #expect(await eventually { watcher.messages(on: topics.online).last?.payloadText.contains(#""online":false"#) == true })
    }

    @Test("20 devices over two Unix sockets: online, a reconnect storm (every will, every device back), stop sends every one offline")
    func fleetStorm() async throws {
        let broker = try await startBroker(MosquittoBroker.Configuration(logsWarnings: false, unixSockets: 2))
        defer { broker.stop() }
        let presence = try await PresenceCounts(broker.clientOptions(clientID: "ux-watch"))
        defer { presence.close() }
        let plan = try FleetPlan(groups: [.init(profile: try doorbellTemplate(prefix: "uxs"), count: 20)])
        let sockets = try broker.unixURLs.map { try MQTTClientOptions(brokerURL: $0, clientID: "fleet") }
        var options = Fleet.Options(connection: sockets[0], window: 4)
        options.brokers = sockets
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total, options: options)
        #expect(await fleet.start().online == 20)
        let ids = Set(fleet.devices.map(\.devId))
        let accepted = broker.unixSocketPaths.map(connectedSockets(path:))
        #expect(accepted.reduce(0, +) == 20 && accepted.allSatisfy { $0 > 0 }, "accepted per socket: \(accepted)")
        #expect(await eventually(timeout: .seconds(10)) { presence.devices(online: 1) == ids })

        let report = await fleet.startReconnectStorm(seconds: 0, jitterSeconds: 0.2).report()
        #expect(report.backOnline == 20 && report.brokers == 2, "\(report)")
        #expect(await eventually(timeout: .seconds(10)) { presence.devices(offline: 1) == ids && presence.devices(online: 2) == ids },
                "no will from \(ids.subtracting(presence.devices(offline: 1)).sorted()), not back: \(ids.subtracting(presence.devices(online: 2)).sorted())")
        #expect(fleet.devices.allSatisfy { $0.mqttCounters.reconnects >= 1 })

        _ = await fleet.stop()
        #expect(await eventually(timeout: .seconds(10)) { presence.devices(offline: 2) == ids },
                "not offline: \(ids.subtracting(presence.devices(offline: 2)).sorted())")
        // mosquitto 2.0.11 cannot set TCP_NODELAY on a Unix socket; with warnings off it says nothing per connect.
        #expect(!broker.log().contains("TCP_NODELAY"))
    }

    @Test("ipcemu fleet (the default, and --private-broker-transport unix): devices over Unix sockets, apps shown the TCP URL; SIGUSR1 storm; SIGTERM removes the sockets",
          arguments: [[], ["--private-broker-transport", "unix"]])
    func fleetCommandDefault(transport: [String]) async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "uxc-{index:4}")
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):20"] + transport + ["--json", "--log-level", "error"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let note = jsonEvents(fleet.stdout).compactMap { $0["message"] as? String }.first { $0.hasPrefix("private broker at ") } ?? ""
        let devices = jsonEvents(fleet.stdout).compactMap { $0["message"] as? String }.first { $0.hasPrefix("devices over 1 Unix socket in ") } ?? ""
        let socketDir = String(devices.dropFirst("devices over 1 Unix socket in ".count))
        #expect(!socketDir.isEmpty, "stdout: \(fleet.stdout)")
        let tcp = String(note.dropFirst("private broker at ".count).prefix { $0 != " " })
        #expect(tcp.hasPrefix("mqtt://127.0.0.1:"), "\(note)")
        let summary = jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }
        #expect(summary?["online"] as? Int == 20)
        #expect(summary?["broker"] as? String == tcp)
        let socket = socketDir + "/mqtt-0.sock"
        #expect(UnixSocketProbe.isAccepting(path: socket), "\(socket)")

        let presence = try await PresenceCounts(try MQTTClientOptions(brokerURL: tcp, clientID: "uxc-watch"))
        defer { presence.close() }
        #expect(await eventually(timeout: .seconds(10)) { presence.devices(online: 1).count == 20 })
        fleet.signal(SIGUSR1)
        #expect(await fleet.waitFor("reconnect storm: 20 of 20 devices back online", timeout: .seconds(60)), "stdout: \(fleet.stdout)")
        #expect(await eventually(timeout: .seconds(10)) { presence.devices(offline: 1).count == 20 && presence.devices(online: 2).count == 20 })
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
        #expect(presence.devices(offline: 2).count == 20)
        #expect(!FileManager.default.fileExists(atPath: socket), "\(socket) left behind")
    }

    @Test("3 fleet processes over Unix sockets: each has a socket of its own on the broker (its window fits mosquitto's backlog of 10), holding exactly its devices")
    func socketPerProcess() async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "uxp-{index:4}")
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):30", "--max-devices-per-process", "10",
                                       "--private-broker-transport", "unix", "--json", "--log-level", "error"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let prefix = "devices over 3 Unix sockets (1 per process) in "
        let note = jsonEvents(fleet.stdout).compactMap { $0["message"] as? String }.first { $0.hasPrefix(prefix) } ?? ""
        let socketDir = String(note.dropFirst(prefix.count))
        try #require(!socketDir.isEmpty, "stdout: \(fleet.stdout)")
        #expect(jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }?["online"] as? Int == 30)
        let paths = (0..<3).map { socketDir + "/mqtt-\($0).sock" }
        #expect(await eventually(timeout: .seconds(10)) { paths.map(connectedSockets(path:)) == [10, 10, 10] },
                "connections per socket: \(paths.map(connectedSockets(path:)))")
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
    }

    @Test("--private-broker-transport tcp, or --source-ip without it, keeps the devices on loopback TCP",
          arguments: [["--private-broker-transport", "tcp"], ["--source-ip", "127.0.0.2"]])
    func fleetCommandTCP(transport: [String]) async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "uxt-{index:4}")
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):5"] + transport + ["--json"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let note = jsonEvents(fleet.stdout).compactMap { $0["message"] as? String }.first { $0.hasPrefix("private broker at ") } ?? ""
        #expect(!note.isEmpty && !fleet.stdout.contains("Unix socket"), "\(fleet.stdout)")
        #expect(jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }?["online"] as? Int == 5)
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
    }

    @Test("Bad unix:// brokers and --source-ip with a Unix socket are refused with what is wrong")
    func badArguments() async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "uxb-{index}")
        let long = "unix:///" + String(repeating: "d", count: 120) + ".sock"
        for (args, text) in [
            (["--broker", "unix://relative.sock"], "absolute socket path"),
            (["--broker", "unix://"], "no socket path"),
            (["--broker", long], "126 bytes, longer than the 107"),
            (["--broker", "unix:///tmp/a.sock", "--source-ip", "127.0.0.2"], "--source-ip 127.0.0.2 needs TCP"),
            (["--private-broker-transport", "unix", "--source-ip", "127.0.0.2"], "--source-ip 127.0.0.2 needs TCP"),
            (["--broker", "mqtt://127.0.0.1:1", "--private-broker-transport", "tcp"], "--private-broker-transport is for the private brokers"),
            (["--private-broker-transport", "udp"], "tcp"),
        ] {
            let run = try await CLIRun.ipcemu(["fleet", "--profile", "\(template):2"] + args)
            #expect(run.status != 0, "\(args)")
            #expect(run.stderr.contains(text), "\(args): \(run.stderr)")
        }
    }
}

/// Connected sockets the listener at `path` accepted (their lines in /proc/net/unix carry its path).
private func connectedSockets(path: String) -> Int {
    // Read to the end: /proc files report no size, and the table runs to thousands of lines here.
    guard let file = FileHandle(forReadingAtPath: "/proc/net/unix"), let data = try? file.readToEnd() else { return -1 }
    try? file.close()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst().filter { line in
        let fields = line.split(separator: " ")
        return fields.count >= 8 && fields[5] == "03" && fields[7] == path
    }.count
}

private func first<Event: Sendable>(_ stream: AsyncStream<Event>, within timeout: Duration = .seconds(10),
                                    _ match: @escaping @Sendable (Event) -> Bool) async -> Event? {
    await withTaskGroup(of: Event?.self) { group in
        group.addTask {
            for await e in stream where match(e) { return e }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let found = await group.next() ?? nil
        group.cancelAll()
        return found
    }
}
