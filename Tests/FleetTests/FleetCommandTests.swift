import Foundation
import MQTTTransport
import Testing
import TestSupport

/// `ipcemu fleet` as a user runs it: real processes, a real broker, presence seen from outside.
@Suite("ipcemu fleet", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetCommandTests {
    @Test("Two shards started with the same arguments hold disjoint devices whose union is the one-process fleet; SIGTERM sends them offline")
    func shardsDisjointAndComplete() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "shard-{index:3}")
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        var shards: [IPCEmuProcess] = []
        for i in 0..<2 {
            shards.append(try IPCEmuProcess(["fleet", "--profile", "\(template):301", "--start", "5", "--shard", "\(i)/2",
                                             "--broker", broker.url, "--json"]))
        }
        for s in shards { #expect(await s.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(s.stdout)\nstderr: \(s.stderr)") }
        let expected = Set((5..<306).map { String(format: "shard-%03d", $0) })
        #expect(await eventually(timeout: .seconds(10)) { presence.online == expected },
                "missing \(expected.subtracting(presence.online).sorted().prefix(5)), extra \(presence.online.subtracting(expected).sorted().prefix(5))")
        let online = shards.map { jsonEvents($0.stdout).first { $0["event"] as? String == "online" } }
        #expect(online.compactMap { $0?["online"] as? Int } == [150, 151])

        for s in shards { s.signal(SIGTERM) }
        for s in shards { #expect(await s.waitForExit(timeout: .seconds(10)) == 0, "stderr: \(s.stderr)") }
        #expect(await eventually(timeout: .seconds(5)) { presence.offline == expected })
        #expect(shards.allSatisfy { $0.stdout.contains(#""event":"stopped""#) })
    }

    @Test("A fleet bigger than one process may hold runs as workers under one supervisor: one summary, all online, SIGTERM ends them all")
    func workers() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "wrk-{index:4}")
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):130", "--broker", broker.url, "--json",
                                       "--max-devices-per-process", "50"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let summary = jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" }
        #expect(summary?["online"] as? Int == 130)
        #expect(summary?["processes"] as? Int == 3, "the supervisor (holding the first block) + 2 workers")
        #expect((summary?["rssBytes"] as? Int ?? 0) > 0)
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 130 })
        // Worker processes exist: children of the supervisor that run `fleet --block`.
        #expect(childProcesses(of: fleet.process.processIdentifier).count == 2)

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(10)) == 0, "stderr: \(fleet.stderr)")
        #expect(await eventually(timeout: .seconds(5)) { presence.offline.count == 130 })
    }

    @Test("Running out of descriptors is reported with what was needed and the limit: no crash, no log flood, SIGTERM still works")
    func descriptorsRunOut() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "fd-{index:4}")
        // A hard limit of 400 descriptors, and one process told to hold 300 devices (a worker's
        // block, as a supervisor that planned with a budget that has shrunk since would give it).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n 400 && exec \"$0\" \"$@\"", ipcemuBinary, "fleet", "--profile", "\(template):300",
                             "--broker", broker.url, "--json", "--block", "0:300"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdout = Collected(""), stderr = Collected("")
        out.fileHandleForReading.readabilityHandler = { h in let d = h.availableData; stdout.withLock { $0 += String(decoding: d, as: UTF8.self) } }
        err.fileHandleForReading.readabilityHandler = { h in let d = h.availableData; stderr.withLock { $0 += String(decoding: d, as: UTF8.self) } }
        try process.run()
        #expect(await eventually(timeout: .seconds(60)) { stdout.snapshot.contains(#""event":"online""#) }, "stderr: \(stderr.snapshot)")
        let summary = jsonEvents(stdout.snapshot).first { $0["event"] as? String == "online" }
        let error = summary?["error"] as? String ?? ""
        #expect(error.contains("out of descriptors"), "\(summary ?? [:])")
        #expect(error.contains("limit of 400"), "\(error)")
        let online = summary?["online"] as? Int ?? 0
        #expect(online > 0 && online < 300, "\(online) online")
        // Alive, quiet, and it still stops cleanly.
        try await Task.sleep(for: .seconds(2))
        #expect(process.isRunning)
        #expect(stderr.snapshot.split(separator: "\n").count < 20, "log flood: \(stderr.snapshot.suffix(500))")
        kill(process.processIdentifier, SIGTERM)
        #expect(await eventually(timeout: .seconds(10)) { !process.isRunning })
        #expect(process.terminationStatus == 0)
    }

    @Test("ipcemu fleet-faults: a reconnect storm from the CLI; every device goes offline (its will) and comes back")
    func fleetFaultsCommand() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "ff-{index:3}")
        let port = try freeLoopbackPort()
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):40", "--broker", broker.url, "--json",
                                       "--control", "127.0.0.1:\(port)", "--log-level", "error"])
        #expect(await fleet.waitFor("control API", timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 40 })
        let counts = try await PresenceCounts(broker.clientOptions(clientID: "ff-counts"))
        defer { counts.close() }
        #expect(await eventually(timeout: .seconds(10)) { counts.devices(online: 1).count == 40 })
        let storm = try await CLIRun.ipcemu(["fleet-faults", "--control", "http://127.0.0.1:\(port)", "--reconnect-storm", "0.5", "--jitter", "0.5"])
        #expect(storm.status == 0, "\(storm.stderr)")
        #expect(storm.stdout.contains(#""dropped":40"#), "\(storm.stdout)")
        // It returns once the fleet says every device is back (the storm's report in GET /api/fleet).
        #expect(storm.stdout.contains(#""stormBackOnline":40"#) && storm.stdout.contains(#""stormsCompleted":1"#), "\(storm.stdout)")
        // Every will (offline) was published, and every device's online status came again.
        #expect(await eventually(timeout: .seconds(10)) { counts.devices(offline: 1).count == 40 && counts.devices(online: 2).count == 40 })
        #expect(await eventually(timeout: .seconds(15)) { presence.online.count == 40 })
        let hb = try await CLIRun.ipcemu(["fleet-faults", "--control", "http://127.0.0.1:\(port)", "--suppress-heartbeats", "0.25"])
        #expect(hb.stdout.contains(#""suppressing":10"#), "\(hb.stdout) \(hb.stderr)")
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(10)) == 0)
    }

    @Test("Bad arguments are refused with a message naming what was wrong")
    func badArguments() async throws {
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "bad-{index}")
        for (args, text) in [
            (["--profile", "\(template):5", "--shard", "2/2"], "i from 0 to N-1"),
            (["--profile", "\(template):5", "--count", "6"], "add up to 5"),
            (["--profile", template, "--profile", template], "--count"),
            (["--profile", "\(template):5", "--threads", "0"], "--threads"),
        ] {
            let run = try await CLIRun.ipcemu(["fleet"] + args + ["--broker", "mqtt://127.0.0.1:1"])
            #expect(run.status != 0)
            #expect(run.stderr.contains(text), "\(args): \(run.stderr)")
        }
    }
}

/// Processes whose parent is `pid` (from /proc/*/stat).
func childProcesses(of pid: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
    }
}
