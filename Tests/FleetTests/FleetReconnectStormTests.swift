import Emulator
import Foundation
import MQTTTransport
import Synchronization
import Testing
import TestSupport

/// The reconnect storm's back-off schedule (Sources/Emulator/Fleet/FleetReconnectStorm.swift).
@Suite("Reconnect storm back-off")
struct FleetReconnectBackoffTests {
    @Test("Ceilings double from the initial delay up to the maximum and stay there")
    func ceilings() {
        let b = FleetReconnectBackoff(initialDelay: 0.25, maximumDelay: 8, multiplier: 2)
        #expect((0..<8).map { b.ceiling(attempt: $0) } == [0.25, 0.5, 1, 2, 4, 8, 8, 8])
        #expect(b.ceiling(attempt: 10_000) == 8, "a huge attempt number stays at the cap (no overflow, no long loop)")
        #expect(FleetReconnectBackoff(initialDelay: 20, maximumDelay: 8).ceiling(attempt: 0) == 8, "the initial delay is capped too")
        #expect(FleetReconnectBackoff(initialDelay: 1, maximumDelay: 8, multiplier: 0.5).ceiling(attempt: 3) == 1,
                "a multiplier under 1 never shrinks the delay")
    }

    @Test("Full jitter: the delay is the unit's share of the ceiling, the unit clamped to 0...1")
    func fullJitter() {
        let b = FleetReconnectBackoff()
        #expect(b.delay(attempt: 2, unit: 0) == 0)
        #expect(b.delay(attempt: 2, unit: 0.5) == 0.5)
        #expect(b.delay(attempt: 2, unit: 1) == 1)
        #expect(b.delay(attempt: 2, unit: 7) == 1)
        #expect(b.delay(attempt: 2, unit: -3) == 0)
        #expect(b.delay(attempt: 2, unit: .nan) == 0)
    }

    @Test("Drawn delays spread over the whole range (no two devices retry together) and average half the ceiling")
    func spread() {
        let b = FleetReconnectBackoff()
        var random = SystemRandomNumberGenerator()
        for attempt in [0, 3, 8] {
            let ceiling = b.ceiling(attempt: attempt)
            let delays = (0..<10_000).map { _ in b.delay(attempt: attempt, using: &random) }
            #expect(delays.allSatisfy { $0 >= 0 && $0 < ceiling }, "attempt \(attempt)")
            let mean = delays.reduce(0, +) / Double(delays.count)
            #expect(abs(mean - ceiling / 2) < ceiling * 0.05, "attempt \(attempt): mean \(mean) of ceiling \(ceiling)")
            // Ten equal-width bins all hold a fair share: no herd at one moment.
            var bins = [Int](repeating: 0, count: 10)
            for d in delays { bins[min(9, Int(d / ceiling * 10))] += 1 }
            #expect(bins.allSatisfy { $0 > 800 && $0 < 1200 }, "attempt \(attempt): \(bins)")
        }
    }
}

/// Every online status message of every device, counted (a storm must show each device online again).
final class PresenceCounts: Sendable {
    private let counts = Mutex<[String: (online: Int, offline: Int)]>([:])
    let client: MQTTClient

    init(_ options: MQTTClientOptions) async throws {
        client = try MQTTClient(options: options)
        client.setMessageHandler { [weak self] m in
            guard let self else { return }
            let parts = m.topic.split(separator: "/")
            guard parts.count >= 2 else { return }
            let online = m.payloadText.contains(#""online":true"#)
            self.counts.withLock { c in
                var entry = c[String(parts[parts.count - 2]), default: (0, 0)]
                if online { entry.online += 1 } else { entry.offline += 1 }
                c[String(parts[parts.count - 2])] = entry
            }
        }
        client.connect()
        _ = await client.waitUntilConnected()
        try await client.subscribeAndWait("smart/device/meta/+/online", qos: 1)
    }

    func devices(online atLeast: Int) -> Set<String> { counts.withLock { Set($0.filter { $0.value.online >= atLeast }.keys) } }
    func devices(offline atLeast: Int) -> Set<String> { counts.withLock { Set($0.filter { $0.value.offline >= atLeast }.keys) } }

    func close() { client.close() }
}

@Suite("Reconnect storm through real mosquittos", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetReconnectStormTests {
    @Test("300 devices over 2 brokers: every connection dropped at once (every will published), all back online paced per broker, each device's online status seen again, none lost")
    func stormOverTwoBrokers() async throws {
        var brokers: [MosquittoBroker] = []
        for _ in 0..<2 { brokers.append(try await startBroker()) }
        defer { for b in brokers { b.stop() } }
        let plan = try FleetPlan(groups: [.init(profile: try doorbellTemplate(prefix: "rs"), count: 300)])
        var options = Fleet.Options(connection: brokers[0].clientOptions(clientID: "fleet"), window: 16)
        options.brokers = brokers.map { $0.clientOptions(clientID: "fleet") }
        let fleet = try Fleet(plan: plan, positions: 0..<plan.total, options: options)
        var watchers: [PresenceCounts] = []
        for (i, b) in brokers.enumerated() { watchers.append(try await PresenceCounts(b.clientOptions(clientID: "rs-watch-\(i)"))) }
        defer { for w in watchers { w.close() } }
        #expect(await fleet.start().online == 300)
        let ids = Set(fleet.devices.map(\.devId))
        func seen(online n: Int) -> Set<String> { watchers.reduce(into: Set<String>()) { $0.formUnion($1.devices(online: n)) } }
        #expect(await eventually(timeout: .seconds(20)) { seen(online: 1) == ids })

        let storm = await fleet.startReconnectStorm(seconds: 0, jitterSeconds: 0.5)
        #expect(storm.devices == 300)
        let report = await storm.report()
        #expect(report.devices == 300)
        #expect(report.backOnline == 300, "\(report)")
        #expect(report.brokers == 2 && report.window == 16)
        #expect(fleet.lastReconnectStorm == report)
        #expect(fleet.reconnectStormCounts == (1, 1))
        #expect(await fleet.onlineCount() == 300)
        // Each device's will (offline) and then its online status again, on the broker its devId hashes to.
        let list = try FleetBrokerList(urls: brokers.map(\.url))
        for (b, w) in watchers.enumerated() {
            let mine = Set(ids.filter { list.index(of: $0) == b })
            #expect(!mine.isEmpty)
            #expect(await eventually(timeout: .seconds(10)) { w.devices(offline: 1) == mine && w.devices(online: 2) == mine },
                    "broker \(b): no will from \(mine.subtracting(w.devices(offline: 1)).sorted().prefix(5)), not online again: \(mine.subtracting(w.devices(online: 2)).sorted().prefix(5))")
        }
        #expect(fleet.devices.allSatisfy { $0.mqttCounters.reconnects >= 1 })
        await fleet.stop()
    }

    @Test("SIGUSR1 to ipcemu fleet with a worker: a storm in both processes, each says when all its devices are back")
    func signalReachesWorkers() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "sig-{index:4}")
        let watcher = try await PresenceCounts(broker.clientOptions(clientID: "sig-watch"))
        defer { watcher.close() }
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):100", "--broker", broker.url,
                                       "--max-devices-per-process", "50", "--json", "--log-level", "error"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        #expect(await eventually(timeout: .seconds(10)) { watcher.devices(online: 1).count == 100 })
        fleet.signal(SIGUSR1)
        #expect(await eventually(timeout: .seconds(60)) {
            fleet.stdout.components(separatedBy: "reconnect storm: 50 of 50 devices back online").count - 1 == 2
        }, "stdout: \(fleet.stdout)")
        #expect(await eventually(timeout: .seconds(10)) { watcher.devices(online: 2).count == 100 && watcher.devices(offline: 1).count == 100 })
        #expect(fleet.process.isRunning)
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
    }
}
