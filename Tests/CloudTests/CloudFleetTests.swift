import CloudLink
import Foundation
import IPCWire
import TestSupport
import Testing
import TuyaCloud

/// The licence file of `ipcemu fleet --cloud tuya` and the pacer (issue 21 item 5), without a cloud.
@Suite("Cloud fleet licences and pacing")
struct CloudFleetLicenceTests {
    static let authkey = "Kq7Wm2Xp9Ld4Rt6Yb1Hn3Vc8Zf5Gs0Ja"

    @Test("a header, # comments, blank lines and CRLF are skipped; the licences come in file order")
    func parses() throws {
        let text = "# licences of the QA product\r\nuuid,authkey\r\n\r\nuuidA01, \(Self.authkey)\r\n  # a comment\nuuidB02,\(Self.authkey)\n"
        let licences = try CloudFleetLicences.parse(text, productKey: "pk1")
        #expect(licences.map(\.uuid) == ["uuidA01", "uuidB02"])
        #expect(licences.allSatisfy { $0.productKey == "pk1" && $0.authkey == Self.authkey })
    }

    @Test("a bad line is refused naming its number and field", arguments: [
        ("uuid,authkey\nuuidA01,\(authkey)\nuuidB02,\(authkey.dropLast())\n", CloudFleetLicenceError.badLine(
            line: 3, field: "authkey", why: "has 31 characters; the platform issues 32")),
        ("uuidA01,\(authkey)\n# c\nuuidA01,\(authkey)\n", .badLine(line: 3, field: "uuid", why: "uuidA01 is already on line 1")),
        ("uuidA01\n", .badLine(line: 1, field: "authkey", why: "is missing (expected uuid,authkey)")),
        ("uuidA01,\(authkey),extra\n", .badLine(line: 1, field: "line", why: "has 3 fields; expected uuid,authkey")),
        ("uu/id,\(authkey)\n", .badLine(line: 1, field: "uuid",
                                         why: "contains a character that cannot be printed unescaped into a URL, a signature or JSON")),
        ("# nothing\n\n", .empty),
    ])
    func refuses(_ text: String, _ expected: CloudFleetLicenceError) {
        #expect(throws: expected) { try CloudFleetLicences.parse(text, productKey: "pk1") }
    }

    @Test("the pacer admits one request per 1/R s over all callers, and lets through what it does not pace at once")
    func pacer() async {
        let pacer = CloudFleetPacer(perSecond: 20)
        // Each caller gets a slot 1/R after the one before, and is never let through before its slot
        // (when the callers wake is the machine's business: a loaded one wakes them late together).
        let admissions = await withTaskGroup(of: (slot: ContinuousClock.Instant, at: ContinuousClock.Instant).self) { group in
            for _ in 0..<5 { group.addTask { let slot = await pacer.admit(); return (slot, ContinuousClock.now) } }
            var all: [(slot: ContinuousClock.Instant, at: ContinuousClock.Instant)] = []
            for await a in group { all.append(a) }
            return all.sorted { $0.slot < $1.slot }
        }
        #expect(admissions.count == 5 && admissions.allSatisfy { $0.at >= $0.slot }, "a caller was let through before its slot")
        let slots = admissions.map(\.slot)
        for (a, b) in zip(slots, slots.dropFirst()) { #expect(b - a >= .milliseconds(50), "slots \(slots)") }
        #expect(await pacer.admitted == 5)
        #expect(CloudFleetPacer.paces(.activate) && CloudFleetPacer.paces(.resolveEndpoints))
        #expect(!CloudFleetPacer.paces(.updateVersions) && !CloudFleetPacer.paces(.updateSkill))
    }
}

/// `ipcemu fleet --cloud tuya --licences FILE.csv` as a process against the stand-in, through real
/// TLS: five licences paired at once, activations paced, all five online on the stand-in's broker, a
/// restart that rejoins all five with no new token; a bad licence line refused with its number.
@Suite("Cloud fleet (ipcemu fleet --cloud tuya against the stand-in)", .serialized, .timeLimit(.minutes(4)))
struct CloudFleetTests {
    static let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    static let productKey = "pkipcemufleet01"

    static func authkey() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
        return String((0..<32).map { _ in alphabet.randomElement() ?? "A" })
    }

    static func tempDir(_ prefix: String) -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func fleet(_ standin: StandinProcess, licences: String, stateDir: String, rate: Double) throws -> IPCEmuProcess {
        try IPCEmuProcess([
            "fleet", "--profile", doorbell, "--cloud", "tuya", "--licences", licences, "--product-key", productKey,
            "--state-dir", stateDir, "--iotdns", standin.ready.iotdns, "--cloud-ca", standin.ready.caFile,
            "--activations-per-second", String(rate), "--json", "--log-level", "info",
        ])
    }

    /// The fleet's JSON lines read back with the types it prints them with (lines that are not one are skipped).
    static func lines(_ stdout: String) -> [CloudFleetLine] {
        stdout.split(separator: "\n").compactMap { try? CloudFleetLine(jsonLine: Array($0.utf8)) }
    }

    /// Waits for a line of the fleet's stdout that `matches`.
    static func waitForLine(_ fleet: IPCEmuProcess, timeout: Duration = .seconds(30),
                            _ matches: (CloudFleetLine) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if lines(fleet.stdout).contains(where: matches) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return lines(fleet.stdout).contains(where: matches)
    }

    /// Counts with these values (total first), to compare with a line's.
    static func counts(total: Int, joined: Int, paired: Int = 0, waiting: Int = 0, refused: Int = 0, joining: Int = 0) -> CloudFleetCounts {
        var c = CloudFleetCounts()
        c.total = total
        c.joined = joined
        c.paired = paired
        c.waitingForToken = waiting
        c.refused = refused
        c.joining = joining
        return c
    }

    /// The `seconds` of the fleet's `paced` lines for `request` (iotdns: resolveEndpoints), in order.
    static func pacedSeconds(_ stdout: String, request: String) -> [Double] {
        stdout.split(separator: "\n").compactMap { line -> Double? in
            guard line.contains(#""event":"paced""#), line.contains(#""request":"\#(request)""#),
                  let range = line.range(of: #""seconds":"#) else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
    }

    /// uuid -> (devId, activatedAtMs) of every activated device.
    static func activations(_ standin: StandinProcess) async throws -> [String: (devId: String, at: Int64)] {
        guard case .array(let devices)? = try await standin.state()["devices"] else { return [:] }
        var out: [String: (devId: String, at: Int64)] = [:]
        for case .object(let device) in devices {
            if case .string(let uuid)? = device["uuid"], case .string(let devId)? = device["devId"],
               case .int(let at)? = device["activatedAtMs"] {
                out[uuid] = (devId, at)
            }
        }
        return out
    }

    @Test("five licences: bound at once, activations paced at 1/R apart, all five online on the TLS broker; a restart rejoins all five without a token")
    func fiveLicences() async throws {
        let uuids = (0..<5).map { "ipcemufleet\($0)" + String(UInt32.random(in: 0...UInt32.max), radix: 36) }
        let keys = uuids.map { _ in Self.authkey() }
        let standin = try await StandinProcess.start(licences: zip(uuids, keys).map { "\($0),\($1),\(Self.productKey)" })
        defer { standin.stop() }
        let dir = Self.tempDir("cloud-fleet-")
        let csv = dir + "/licences.csv"
        try (["# five QA licences", "uuid,authkey"] + zip(uuids, keys).map { "\($0),\($1)" }).joined(separator: "\n")
            .write(toFile: csv, atomically: true, encoding: .utf8)
        let stateRoot = dir + "/state"
        let rate = 2.0

        var fleet = try Self.fleet(standin, licences: csv, stateDir: stateRoot, rate: rate)
        #expect(await fleet.waitFor(#""waitingForToken":5"#, timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        for uuid in uuids { #expect(fleet.stdout.contains("uuid=\(uuid)&v=2.0"), "no pairing URL for \(uuid)") }
        // The app scans all five at once: five tokens pushed together.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for uuid in uuids { group.addTask { try await standin.bind(uuid: uuid) } }
            try await group.waitForAll()
        }
        #expect(await fleet.waitFor(#""event":"online","online":5"#, timeout: .seconds(60)),
                "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)\nstand-in: \(standin.log)")

        // Every device activated once. The fleet let the activations through 1/R apart (its `paced`
        // lines, stamped when each woke: a late wake-up on a loaded machine shortens the next gap,
        // hence 10% slack); the stand-in stamped them spread over at least (n-1)/R, less the
        // jitter of five TLS handshakes on a loaded machine.
        let activated = try await Self.activations(standin)
        #expect(Set(activated.keys) == Set(uuids))
        let sent = Self.pacedSeconds(fleet.stdout, request: "activate")
        let sentGaps = zip(sent, sent.dropFirst()).map { $1 - $0 }
        #expect(sent.count == 5 && sentGaps.allSatisfy { $0 >= 0.9 / rate }, "activations let through at \(sent)")
        let times = activated.values.map(\.at).sorted()
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        print("cloud fleet at \(rate)/s: activations sent \(sentGaps.map { Int(($0 * 1000).rounded()) }) ms apart, stamped by the stand-in \(gaps) ms apart")
        #expect(gaps.count == 4 && (times.last ?? 0) - (times.first ?? 0) >= Int64(0.75 * 4 * 1000 / rate), "stand-in gaps \(gaps)")
        for uuid in uuids {
            #expect(FileManager.default.fileExists(atPath: CloudStateStore(directory: stateRoot + "/" + uuid, uuid: uuid).path))
        }

        // The app sees each one online (retained) on the stand-in's broker.
        var watchers: [CloudJoinTests.OnlineWatcher] = []
        for (_, device) in activated {
            let watcher = try await CloudJoinTests.OnlineWatcher(standin, devId: device.devId)
            #expect(await watcher.waitFor(#""online":true"#), "\(device.devId): \(watcher.payloads)")
            watchers.append(watcher)
        }

        // Restart: all five rejoin from their state folders, with no pairing and no token.
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(fleet.stderr)")
        #expect(Self.lines(fleet.stdout).contains { if case .summary(let c, _) = $0 { c.total == 5 && c.joined == 5 } else { false } },
                "stdout: \(fleet.stdout)")
        for watcher in watchers { #expect(await watcher.waitFor(#""online":false"#), "\(watcher.payloads)") }
        let binds = standin.log.components(separatedBy: "bind: token").count - 1
        #expect(binds == 5)
        let seen = watchers.map(\.payloads.count)
        fleet = try Self.fleet(standin, licences: csv, stateDir: stateRoot, rate: rate)
        #expect(await fleet.waitFor(#""event":"online","online":5"#, timeout: .seconds(60)),
                "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        for (watcher, after) in zip(watchers, seen) {
            #expect(await watcher.waitFor(#""online":true"#, after: after), "\(watcher.payloads)")
        }
        #expect(!fleet.stdout.contains(#""event":"pairing""#), "a restart asked for pairing: \(fleet.stdout)")
        #expect(standin.log.components(separatedBy: "bind: token").count - 1 == binds)
        let again = try await Self.activations(standin)
        #expect(again.mapValues(\.at) == activated.mapValues(\.at), "a restart activated again")
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(30)) == 0)
        for watcher in watchers { watcher.client.close() }
    }

    @Test("a device whose activation is refused backs off on its own; the other two join and the summary counts it refused")
    func refusedDoesNotHoldBackOthers() async throws {
        let uuids = (0..<3).map { "ipcemufleetr\($0)" + String(UInt32.random(in: 0...UInt32.max), radix: 36) }
        let keys = uuids.map { _ in Self.authkey() }
        let wrong = Self.authkey()
        // The last device holds an authkey that is not its licence's: the cloud refuses its sign.
        let standin = try await StandinProcess.start(licences: zip(uuids, keys).enumerated().map { index, pair in
            "\(pair.0),\(pair.1),\(Self.productKey)" + (index == 2 ? ",\(wrong)" : "")
        })
        defer { standin.stop() }
        let dir = Self.tempDir("cloud-fleet-refused-")
        let csv = dir + "/licences.csv"
        try zip(uuids, keys).enumerated().map { index, pair in "\(pair.0),\(index == 2 ? wrong : pair.1)" }
            .joined(separator: "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        let fleet = try Self.fleet(standin, licences: csv, stateDir: dir + "/state", rate: 4)
        // The refused device is bound first, so its backoff would delay the others if it held them.
        try await standin.bind(uuid: uuids[2])
        #expect(await Self.waitForLine(fleet) { if case .refused(let uuid, _) = $0 { uuid == uuids[2] } else { false } },
                "stdout: \(fleet.stdout)\nstand-in: \(standin.log)")
        try await standin.bind(uuid: uuids[0])
        try await standin.bind(uuid: uuids[1])
        let twoJoinedOneRefused = Self.counts(total: 3, joined: 2, refused: 1)
        #expect(await Self.waitForLine(fleet) { if case .cloud(let c, _) = $0 { c == twoJoinedOneRefused } else { false } },
                "stdout: \(fleet.stdout)")
        #expect(fleet.stdout.contains("SING_VALIDATE_FALED"))
        #expect(standin.log.contains("the sign does not match the authkey of \(uuids[2])"))
        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(30)) == 0)
        #expect(Self.lines(fleet.stdout).contains { if case .summary(let c, _) = $0 { c == twoJoinedOneRefused } else { false } },
                "stdout: \(fleet.stdout)")
    }

    @Test("a bad licence line is refused with its line number and field, before anything joins")
    func badLine() async throws {
        let dir = Self.tempDir("cloud-fleet-bad-")
        let csv = dir + "/licences.csv"
        let good = Self.authkey()
        try "uuid,authkey\nipcemufleetok1,\(good)\n# next: 31 characters\nipcemufleetbad,\(good.dropLast())\n"
            .write(toFile: csv, atomically: true, encoding: .utf8)
        let run = try await CLIRun.ipcemu([
            "fleet", "--profile", Self.doorbell, "--cloud", "tuya", "--licences", csv, "--product-key", Self.productKey,
            "--state-dir", dir + "/state", "--iotdns", "127.0.0.1:9",
        ])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--licences \(csv): line 4: authkey has 31 characters; the platform issues 32"), "stderr: \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/state"), "a refused licence file made state folders")

        try "ipcemufleetok1,\(good)\nipcemufleetok1,\(good)\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let duplicate = try await CLIRun.ipcemu([
            "fleet", "--profile", Self.doorbell, "--cloud", "tuya", "--licences", csv, "--product-key", Self.productKey,
        ])
        #expect(duplicate.status != 0)
        #expect(duplicate.stderr.contains("line 2: uuid ipcemufleetok1 is already on line 1"), "stderr: \(duplicate.stderr)")
    }
}
