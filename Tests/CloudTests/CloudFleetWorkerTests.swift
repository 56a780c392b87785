import CloudLink
import Foundation
import TestSupport
import Testing
import TuyaCloud

/// `ipcemu fleet --cloud tuya` over worker processes and shards, against the stand-in (issue 21
/// item 5 at scale): the licence rows are cut into blocks as a broker fleet's positions are, each
/// process holds its block's runners and state folders, and the join rate is divided among them.
@Suite("Cloud fleet workers and shards (against the stand-in)", .serialized, .timeLimit(.minutes(5)))
struct CloudFleetWorkerTests {
    static func licences(_ n: Int, prefix: String) -> (uuids: [String], keys: [String]) {
        let uuids = (0..<n).map { String(format: "%@%02d", prefix, $0) + String(UInt32.random(in: 0...UInt32.max), radix: 36) }
        return (uuids, uuids.map { _ in CloudFleetTests.authkey() })
    }

    static func csv(_ uuids: [String], _ keys: [String], in dir: String) throws -> String {
        let path = dir + "/licences.csv"
        try (["uuid,authkey"] + zip(uuids, keys).map { "\($0),\($1)" }).joined(separator: "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The command lines of the processes whose parent is `pid`.
    static func children(of pid: Int32) -> [[String]] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> [String]? in
            guard Int32(entry) != nil,
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, Int32(fields[1]) == pid,
                  let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            return raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test("20 licences over 2 processes: a worker holds rows 10-19; all 20 join, each activated once; each process paces at R/2")
    func twentyOverTwoProcesses() async throws {
        let (uuids, keys) = Self.licences(20, prefix: "ipcemuwk")
        let standin = try await StandinProcess.start(licences: zip(uuids, keys).map { "\($0),\($1),\(CloudFleetTests.productKey)" })
        defer { standin.stop() }
        let dir = CloudFleetTests.tempDir("cloud-fleet-workers-")
        let csv = try Self.csv(uuids, keys, in: dir)
        let rate = 8.0, processes = 2
        let fleet = try IPCEmuProcess([
            "fleet", "--profile", CloudFleetTests.doorbell, "--cloud", "tuya", "--licences", csv,
            "--product-key", CloudFleetTests.productKey, "--state-dir", dir + "/state", "--iotdns", standin.ready.iotdns,
            "--cloud-ca", standin.ready.caFile, "--activations-per-second", String(rate), "--max-devices-per-process", "10",
            "--json", "--log-level", "info",
        ])
        let waiting = CloudFleetTests.counts(total: 20, joined: 0, waiting: 20)
        #expect(await CloudFleetTests.waitForLine(fleet, timeout: .seconds(60)) { if case .cloud(let c, _) = $0 { c == waiting } else { false } },
                "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        #expect(fleet.stdout.contains("20 licences need 2 processes"), "stdout: \(fleet.stdout)")
        // One worker, holding rows 10-19 at half the rate; every pairing URL reaches the supervisor's output.
        let workers = Self.children(of: fleet.process.processIdentifier).filter { $0.contains("--cloud") }
        #expect(workers.count == 1, "\(workers)")
        let worker = workers.first ?? []
        let blockArgument = worker.firstIndex(of: "--block").map { worker.indices.contains($0 + 1) ? worker[$0 + 1] : "" }
        #expect(blockArgument == "10:20", "\(worker)")
        let rateArgument = worker.firstIndex(of: "--activations-per-second").map { worker.indices.contains($0 + 1) ? worker[$0 + 1] : "" }
        #expect(rateArgument.flatMap(Double.init) == rate / Double(processes), "\(worker)")
        let pairing = Set(CloudFleetTests.lines(fleet.stdout).compactMap { if case .pairing(let uuid, _) = $0 { uuid } else { nil } })
        #expect(pairing == Set(uuids))

        // The app scans all 20 at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for uuid in uuids { group.addTask { try await standin.bind(uuid: uuid) } }
            try await group.waitForAll()
        }
        #expect(await CloudFleetTests.waitForLine(fleet, timeout: .seconds(90)) {
            if case .online(let online, let planned, _, _) = $0 { online == 20 && planned == 20 } else { false }
        }, "stdout: \(fleet.stdout)\nstand-in: \(standin.log)")

        // Each device activated once; each in its own state folder.
        let activated = try await CloudFleetTests.activations(standin)
        #expect(Set(activated.keys) == Set(uuids))
        for uuid in uuids {
            #expect(standin.log.components(separatedBy: "activated uuid \(uuid) as devId").count - 1 == 1, "\(uuid)")
            #expect(FileManager.default.fileExists(atPath: CloudStateStore(directory: dir + "/state/" + uuid, uuid: uuid).path))
        }
        // The pacing: each process let its activations through at least P/R apart (its own paced
        // lines, 10% slack for a late wake-up), so the fleet's total stays at R; the stand-in's
        // stamps: of any P+1 activations in a row two come from one process, so they span P/R
        // (less the jitter of TLS handshakes on a loaded machine).
        let spacing = Double(processes) / rate
        let paced = CloudFleetTests.lines(fleet.stdout).compactMap { line -> (uuid: String, seconds: Double)? in
            if case .paced(let uuid, "activate", let seconds) = line { (uuid, seconds) } else { nil }
        }
        #expect(paced.count == 20, "\(paced)")
        for block in [0..<10, 10..<20] {
            let mine = Set(uuids[block])
            let times = paced.filter { mine.contains($0.uuid) }.map(\.seconds).sorted()
            let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(times.count == 10 && gaps.allSatisfy { $0 >= 0.9 * spacing }, "rows \(block): let through at \(times)")
        }
        let stamps = activated.values.map(\.at).sorted()
        let spans = zip(stamps, stamps.dropFirst(processes)).map { $1 - $0 }
        print("cloud fleet over \(processes) processes at \(rate)/s: stand-in stamps \(zip(stamps, stamps.dropFirst()).map { $1 - $0 }) ms apart")
        #expect(spans.allSatisfy { Double($0) >= 0.5 * spacing * 1000 }, "\(processes + 1) activations in a row within \(spans) ms")

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(40)) == 0, "stderr: \(fleet.stderr)")
        let joined = CloudFleetTests.counts(total: 20, joined: 20)
        #expect(CloudFleetTests.lines(fleet.stdout).contains { if case .summary(let c, _) = $0 { c == joined } else { false } },
                "stdout: \(fleet.stdout)")
        #expect(CloudFleetTests.lines(fleet.stdout).contains { if case .stopped(20, _) = $0 { true } else { false } },
                "stdout: \(fleet.stdout)")
    }

    @Test("--shard 1/2 of 4 licences runs rows 2 and 3 only: their URLs, their joins; row 0 never listens for a token")
    func shardRunsItsRows() async throws {
        let (uuids, keys) = Self.licences(4, prefix: "ipcemush")
        let standin = try await StandinProcess.start(licences: zip(uuids, keys).map { "\($0),\($1),\(CloudFleetTests.productKey)" })
        defer { standin.stop() }
        let dir = CloudFleetTests.tempDir("cloud-fleet-shard-")
        let csv = try Self.csv(uuids, keys, in: dir)
        let fleet = try IPCEmuProcess([
            "fleet", "--profile", CloudFleetTests.doorbell, "--cloud", "tuya", "--licences", csv, "--shard", "1/2",
            "--product-key", CloudFleetTests.productKey, "--state-dir", dir + "/state", "--iotdns", standin.ready.iotdns,
            "--cloud-ca", standin.ready.caFile, "--activations-per-second", "8", "--json",
        ])
        let waiting = CloudFleetTests.counts(total: 2, joined: 0, waiting: 2)
        #expect(await CloudFleetTests.waitForLine(fleet, timeout: .seconds(60)) { if case .cloud(let c, _) = $0 { c == waiting } else { false } },
                "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        let pairing = Set(CloudFleetTests.lines(fleet.stdout).compactMap { if case .pairing(let uuid, _) = $0 { uuid } else { nil } })
        #expect(pairing == Set(uuids[2...]), "\(pairing)")
        // Row 0's direct link never comes while the shard's two wait for their tokens.
        await #expect(throws: StandinProcess.StandinError.self) {
            try await standin.post("/standin/bind", #"{"uuid":"\#(uuids[0])","wait":2}"#)
        }
        for uuid in uuids[2...] { try await standin.bind(uuid: uuid) }
        #expect(await CloudFleetTests.waitForLine(fleet, timeout: .seconds(60)) {
            if case .online(2, 2, _, _) = $0 { true } else { false }
        }, "stdout: \(fleet.stdout)")
        #expect(Set(try await CloudFleetTests.activations(standin).keys) == Set(uuids[2...]))
        #expect(!FileManager.default.fileExists(atPath: dir + "/state/" + uuids[0]))
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(fleet.stderr)")
    }
}
