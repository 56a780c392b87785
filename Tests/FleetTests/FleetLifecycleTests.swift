import Foundation
import MQTTTransport
import Testing
import TestSupport

/// `ipcemu fleet` as a service group, through real processes: the supervisor with a worker, the
/// control API and the journal; shutting down on SIGTERM and when a worker dies.
@Suite("ipcemu fleet lifecycle", .serialized, .timeLimit(.minutes(8)), .heavy)
struct FleetLifecycleTests {
    @Test("SIGTERM to a supervised fleet with --control and --journal: every device offline, journals closed, exit 0")
    func sigtermWithControlAndJournal() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "lc-{index:4}")
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        let journal = dir.path + "/journal"
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):60", "--broker", broker.url, "--json",
                                       "--max-devices-per-process", "30", "--journal", journal, "--control", "127.0.0.1:0"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 60 })
        #expect(fleet.stdout.contains("control API and console at http://127.0.0.1:"))

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(20)) == 0, "stderr: \(fleet.stderr)")
        #expect(await eventually(timeout: .seconds(5)) { presence.offline.count == 60 })
        let stopped = jsonEvents(fleet.stdout).first { $0["event"] as? String == "stopped" }
        #expect(stopped?["devices"] as? Int == 60)
        // One journal file per process: the supervisor's and its worker's.
        let files = try FileManager.default.contentsOfDirectory(atPath: journal).sorted()
        #expect(files.count == 2, "\(files)")
    }

    @Test("a worker killed under the supervisor ends the fleet in order: the others go offline cleanly, exit 0")
    func workerDeathShutsDown() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory()
        let template = try writeTemplate(dir, name: "door.yaml", devId: "wd-{index:4}")
        let presence = try await Presence(broker: broker)
        defer { presence.close() }
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(template):40", "--broker", broker.url, "--json",
                                       "--max-devices-per-process", "20"])
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        #expect(await eventually(timeout: .seconds(10)) { presence.online.count == 40 })
        let workers = childProcesses(of: fleet.process.processIdentifier)
        #expect(workers.count == 1)
        let clean = try await MessageCollector.start(broker: broker, filters: ["smart/device/meta/+/online"])
        for worker in workers { kill(worker, SIGKILL) }

        #expect(await fleet.waitForExit(timeout: .seconds(20)) == 0, "stderr: \(fleet.stderr)")
        #expect(fleet.stdout.contains("shutting down (a worker exited)"), "\(fleet.stdout)")
        #expect(await eventually(timeout: .seconds(10)) { presence.offline.count == 40 }, "the killed worker's by their wills")
        // The supervisor's own 20 devices published their own offline status (with its time).
        let own = Set(clean.messages.filter { String(decoding: $0.payload, as: UTF8.self).contains(#""online":false,"t":"#) }
            .map(\.topic))
        #expect(own.count == 20, "\(own.count) clean offline statuses")
        await clean.stop()
    }
}
