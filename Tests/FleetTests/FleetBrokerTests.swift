import Emulator
import Foundation
import MQTTTransport
import Synchronization
import Testing
import TestSupport

/// The broker list of a fleet and the hash that puts each device on one broker (docs/fleet.md
/// "Several brokers").
@Suite("Fleet broker list")
struct FleetBrokerListTests {
    @Test("FNV-1a 64 of the devId's UTF-8 bytes: the published vectors")
    func hashVectors() {
        #expect(FleetBrokerList.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(FleetBrokerList.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FleetBrokerList.hash("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test("A devId's broker depends on the devId and the list only, and 600 devices reach each of 3 brokers")
    func stableAndSpread() throws {
        let list = try FleetBrokerList(arguments: ["mqtt://127.0.0.1:1883,1884,1885"])
        let ids = (0..<600).map { String(format: "door-%04d", $0) }
        let first = ids.map(list.index(of:))
        let again = try FleetBrokerList(arguments: ["mqtt://127.0.0.1:1883", "mqtt://127.0.0.1:1884", "mqtt://127.0.0.1:1885"])
        #expect(ids.map(again.index(of:)) == first, "the comma form and repeated --broker are the same list")
        // The order of the positions (worker split) plays no part: reversed ids, same brokers.
        #expect(ids.reversed().map(list.index(of:)) == first.reversed())
        for b in 0..<3 { #expect(first.filter { $0 == b }.count > 150, "broker \(b) got \(first.filter { $0 == b }.count)") }
        #expect(ids.allSatisfy { FleetBrokerList.index(of: $0, brokers: 1) == 0 })
    }

    @Test("The comma form reuses the scheme, credentials and host; full URLs may be mixed in")
    func parsing() throws {
        #expect(try FleetBrokerList(arguments: ["mqtt://u:p@broker.example:1883,1884"]).urls
                == ["mqtt://u:p@broker.example:1883", "mqtt://u:p@broker.example:1884"])
        #expect(try FleetBrokerList(arguments: ["mqtts://[::1]:8883,8884"]).urls == ["mqtts://[::1]:8883", "mqtts://[::1]:8884"])
        #expect(try FleetBrokerList(arguments: ["mqtt://a:1,mqtt://b:2,3"]).urls == ["mqtt://a:1", "mqtt://b:2", "mqtt://b:3"])
        #expect(try FleetBrokerList(arguments: ["mqtt://a"]).urls == ["mqtt://a"])
    }

    @Test("Bad lists are refused naming the piece", arguments: [
        ["mqtt://a:1,,2"], ["mqtt://a:1,x"], ["1883"], ["mqtt://a:1,70000"], ["mqtt://a:1", "mqtt://a:1"], [], ["http://a:1"],
    ])
    func refused(_ arguments: [String]) {
        #expect(throws: FleetError.self) { try FleetBrokerList(arguments: arguments) }
    }

    @Test("Private brokers: one per (descriptor limit - reserve) devices")
    func privateCount() {
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 60, descriptorLimit: 20_000) == 1)
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 0, descriptorLimit: 20_000) == 1)
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 19_744, descriptorLimit: 20_000) == 1)
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 19_745, descriptorLimit: 20_000) == 2)
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 100_000, descriptorLimit: 20_000) == 6)
        #expect(FleetBrokerList.privateBrokersNeeded(devices: 10, descriptorLimit: 100) == 10, "a tiny limit: one device each")
    }
}

/// `ipcemu fleet` over several real brokers: each broker sees exactly the devices the hash gives it.
@Suite("ipcemu fleet over several brokers", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetBrokersCommandTests {
    @Test("60 devices in 3 processes over 3 brokers from 127.0.0.2 and 127.0.0.3: each broker holds exactly its hashed devices, each device from its address; SIGTERM sends all offline")
    func threeBrokersTwoSourceAddresses() async throws {
        var brokers: [MosquittoBroker] = []
        for _ in 0..<3 { brokers.append(try await startBroker()) }
        defer { for b in brokers { b.stop() } }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "hb-{index:4}")
        let list = try FleetBrokerList(arguments: brokers.map(\.url))
        let ids = (0..<60).map { String(format: "hb-%04d", $0) }
        let expected = (0..<3).map { b in Set(ids.filter { list.index(of: $0) == b }) }
        #expect(expected.allSatisfy { !$0.isEmpty }, "every broker gets devices: \(expected.map(\.count))")
        var watchers: [BrokerPresence] = []
        for b in brokers { watchers.append(try await BrokerPresence(b.clientOptions(clientID: "watch-\(b.port)"))) }
        defer { for w in watchers { w.close() } }

        let port = brokers[0].port
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):60", "--broker", "mqtt://127.0.0.1:\(port),\(brokers[1].port)",
                                       "--broker", brokers[2].url, "--source-ip", "127.0.0.2,127.0.0.3",
                                       "--max-devices-per-process", "25", "--json"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let summary = jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }
        #expect(summary?["online"] as? Int == 60)
        #expect(summary?["processes"] as? Int == 3)
        for (b, w) in watchers.enumerated() {
            #expect(await eventually(timeout: .seconds(10)) { w.online == expected[b] },
                    "broker \(b): missing \(expected[b].subtracting(w.online).sorted().prefix(5)), extra \(w.online.subtracting(expected[b]).sorted().prefix(5))")
        }
        // mosquitto logs each client's address: device at position p from source p % 2.
        for (b, broker) in brokers.enumerated() {
            let log = broker.log()
            for id in expected[b] {
                let position = Int(id.dropFirst(3)) ?? -1
                let source = position % 2 == 0 ? "127.0.0.2" : "127.0.0.3"
                #expect(log.contains("New client connected from \(source):") && log.contains(" as \(id) "),
                        "broker \(b) log has no connection of \(id) from \(source)")
                let line = log.split(separator: "\n").first { $0.contains(" as \(id) ") } ?? ""
                #expect(line.contains("from \(source):"), "\(id): \(line)")
            }
        }

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
        for (b, w) in watchers.enumerated() {
            #expect(await eventually(timeout: .seconds(5)) { w.offline == expected[b] }, "broker \(b)")
        }
    }

    @Test("--private-brokers 2: two mosquittos under the fleet, each holding exactly its hashed devices; SIGTERM stops both")
    func twoPrivateBrokers() async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "pb-{index:4}")
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):40", "--private-brokers", "2", "--json"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let note = jsonEvents(fleet.stdout).compactMap { $0["message"] as? String }.first { $0.hasPrefix("2 private brokers at ") }
        let urls = (note ?? "").dropFirst("2 private brokers at ".count).split(separator: ", ").map(String.init)
        try #require(urls.count == 2, "stdout: \(fleet.stdout)")
        let summary = jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }
        #expect(summary?["online"] as? Int == 40)
        #expect(summary?["broker"] as? String == urls.joined(separator: ","))
        let mosquittos = childProcesses(of: fleet.process.processIdentifier).filter {
            ((try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("mosquitto")
        }
        #expect(mosquittos.count == 2, "mosquitto children of the fleet: \(mosquittos)")

        let list = try FleetBrokerList(arguments: urls)
        let ids = (0..<40).map { String(format: "pb-%04d", $0) }
        var watchers: [BrokerPresence] = []
        for url in urls { watchers.append(try await BrokerPresence(try MQTTClientOptions(brokerURL: url, clientID: "watch-\(watchers.count)"))) }
        defer { for w in watchers { w.close() } }
        for (b, w) in watchers.enumerated() {
            let expected = Set(ids.filter { list.index(of: $0) == b })
            #expect(!expected.isEmpty)
            #expect(await eventually(timeout: .seconds(10)) { w.online == expected }, "broker \(b): \(w.online.sorted())")
        }

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(15)) == 0, "stderr: \(fleet.stderr)")
        for pid in mosquittos {
            #expect(await eventually(timeout: .seconds(5)) { kill(pid, 0) != 0 }, "mosquitto \(pid) still runs")
        }
        for url in urls {
            let endpoint = try MQTTBrokerEndpoint(url: url)
            #expect(!LoopbackPort.isAccepting(port: endpoint.port), "\(url) still accepts")
        }
    }
}

/// Every device's retained online status on one broker.
final class BrokerPresence: Sendable {
    private let state = Mutex<[String: Bool]>([:])
    let client: MQTTClient

    init(_ options: MQTTClientOptions) async throws {
        client = try MQTTClient(options: options)
        client.setMessageHandler { [weak self] m in
            let parts = m.topic.split(separator: "/")
            guard parts.count >= 2 else { return }
            let online = m.payloadText.contains(#""online":true"#)
            self?.state.withLock { $0[String(parts[parts.count - 2])] = online }
        }
        client.connect()
        _ = await client.waitUntilConnected()
        try await client.subscribeAndWait("smart/device/meta/+/online", qos: 1)
    }

    var online: Set<String> { state.withLock { Set($0.filter { $0.value }.keys) } }
    var offline: Set<String> { state.withLock { Set($0.filter { !$0.value }.keys) } }

    func close() { client.close() }
}
