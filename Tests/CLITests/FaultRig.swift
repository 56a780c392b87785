import AppSimulator
import CallEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// What the fault tests (issue 10 part 3) share: a real mosquitto, a real `ipcemu run` process with
/// a quick profile (small video, heartbeats every second, 4 s heartbeat timeout), and the app
/// simulator in this process whose every event is kept.
final class FaultRig: @unchecked Sendable {
    static let devId = "ipcemu-doorbell-0001"
    /// The profile's and the app's heartbeat timeout (PROTOCOL.md 3.3), seconds.
    static let heartbeatTimeout = 4

    let broker: MosquittoBroker
    let directory: TemporaryDirectory
    let profilePath: String
    var journalDirectory: String { directory.file("journal") }

    init(broker: MosquittoBroker? = nil) async throws {
        if let broker { self.broker = broker } else { self.broker = try await startBroker() }
        directory = try TemporaryDirectory(prefix: "ipcemu-faults")
        profilePath = directory.file("doorbell.yaml")
        try Self.quickProfile().write(toFile: profilePath, atomically: true, encoding: .utf8)
    }

    deinit { broker.stop() }

    /// doorbell.yaml with a 320x240 main stream and the short heartbeat timers of these tests.
    static func quickProfile() throws -> String {
        var text = try String(contentsOfFile: packageRootPath + "/device-profiles/doorbell.yaml", encoding: .utf8)
        for (from, to) in [
            ("main: {width: 1280, height: 720, fps: 30}", "main: {width: 320, height: 240, fps: 15}"),
            ("sub: {width: 640, height: 360, fps: 15}", "sub: {width: 160, height: 120, fps: 15}"),
            ("heartbeatInterval: 10 ", "heartbeatInterval: 1 "),
            ("heartbeatTimeout: 30 ", "heartbeatTimeout: \(heartbeatTimeout) "),
        ] {
            guard text.contains(from) else { throw FaultRigError("doorbell.yaml no longer has '\(from)'") }
            text = text.replacingOccurrences(of: from, with: to)
        }
        return text
    }

    /// `ipcemu run` on this rig's broker (answering at once, with a journal unless `journal` is
    /// false), once it says it is online.
    func device(_ extra: [String] = [], answer: String = "answer:0", journal: Bool = true) async throws -> IPCEmuProcess {
        var arguments = ["run", "--profile", profilePath, "--broker", broker.url, "--answer", answer]
        if journal { arguments += ["--journal", journalDirectory] }
        let run = try IPCEmuProcess(arguments + extra)
        guard await run.waitFor("is online", timeout: .seconds(15)) else {
            throw FaultRigError("ipcemu run did not come online: \(run.stdout)\n\(run.stderr.suffix(2000))")
        }
        return run
    }

    /// An app user in this process whose events are all kept (`AppWatch.events`).
    func app(_ user: String = "user-alice") async throws -> AppWatch {
        let config = AppEngineConfig(userId: user, heartbeatIntervalMs: 1000, heartbeatTimeoutMs: Int64(Self.heartbeatTimeout) * 1000)
        let app = try AppUser(userId: user, connection: broker.clientOptions(clientID: user), config: config)
        let watch = AppWatch(app)
        let stream = await app.events()
        watch.pump = Task { for await e in stream { watch.kept.withLock { $0.append(e) } } }
        try await app.start()
        try await app.add(DeviceAddress(devId: Self.devId, localKey: "3f9c2b7a1d4e8f60", p2pPassword: "doorbell-p2p-secret"))
        return watch
    }

    /// The journal's lines (each parsed; a line that does not parse is recorded as an issue).
    func journalLines() throws -> [[String: JSONValue]] {
        let path = journalDirectory + "/" + Self.devId + ".jsonl"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard case .object(let o)? = try? JSONValue.parse(Array(line.utf8)) else {
                Issue.record("journal line does not parse: \(line)")
                return nil
            }
            return o
        }
    }

    /// Ended-call lines of the journal for `session`.
    func journalEnds(_ session: String) throws -> [[String: JSONValue]] {
        try journalLines().filter { $0["kind"] == .string("call") && $0["session"] == .string(session) }
    }

    /// How many times the device has connected to the broker so far (its log lines).
    static func connections(_ run: IPCEmuProcess) -> Int {
        run.stderr.components(separatedBy: "connected broker=").count - 1
    }

    /// The control API's URL `ipcemu run --control 127.0.0.1:0` printed.
    static func controlURL(_ run: IPCEmuProcess) async -> String? {
        guard await run.waitFor("Control API and console: ") else { return nil }
        let line = run.stdout.split(separator: "\n").first { $0.contains("Control API and console: ") }
        return line?.split(separator: " ").first { $0.hasPrefix("http://") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
    }

    /// GET `url` as text.
    static func get(_ url: String) async throws -> String {
        guard let u = URL(string: url) else { throw FaultRigError("bad URL \(url)") }
        let (data, _) = try await URLSession.shared.data(from: u)
        return String(decoding: data, as: UTF8.self)
    }

    /// The value of one Prometheus sample line (`name{labels} value`), if present.
    static func sample(_ metrics: String, _ series: String) -> Int? {
        metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
    }

    /// Resident set size of a process, KiB (/proc/PID/status VmRSS).
    static func rssKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// Children of `pid` named `name` (scans /proc).
    static func children(of pid: Int32, named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { return false }
            let comm = stat[stat.index(after: open)..<close]
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return comm == name && fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// Runs a program to completion; its status and output.
    @discardableResult
    static func shell(_ program: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Aborts the TCP connections of process `pid` to `port` on loopback with `ss -K` (as a network
    /// drop would: the kernel resets them). The number of connections aborted.
    static func dropConnections(of pid: Int32, toPort port: Int) -> Int {
        let listing = shell("/usr/bin/ss", ["-tnpH", "state", "established", "dport", "= :\(port)"]).output
        var dropped = 0
        for line in listing.split(separator: "\n") where line.contains("pid=\(pid),") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 3, let local = columns[2].split(separator: ":").last else { continue }
            let r = shell("/usr/bin/ss", ["-K", "-tnH", "sport", "= :\(local)", "dport", "= :\(port)"])
            if r.status == 0, !r.output.isEmpty { dropped += 1 }
        }
        return dropped
    }

    /// `ss -K` needs root (and a kernel with socket destroy, which the test then checks).
    static let canDropConnections = FileManager.default.isExecutableFile(atPath: "/usr/bin/ss") && getuid() == 0
}

/// An app user and everything it reported.
final class AppWatch: @unchecked Sendable {
    let app: AppUser
    let kept = Collected<[AppEvent]>([])
    var pump: Task<Void, Never>?

    init(_ app: AppUser) { self.app = app }

    var events: [AppEvent] { kept.snapshot }
    var count: Int { kept.snapshot.count }

    /// Waits for an event (after index `after`) that `match` picks.
    func first<T>(after: Int = 0, within timeout: Duration = .seconds(10), _ match: (AppEvent) -> T?) async -> T? {
        var found: T?
        _ = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            found = kept.snapshot.dropFirst(after).lazy.compactMap(match).first
            return found != nil
        }
        return found
    }

    /// Messages received from the device (after index `after`).
    func received(after: Int = 0) -> [CallMessage] {
        events.dropFirst(after).compactMap { if case .received(let m, _) = $0 { m } else { nil } }
    }

    func ends(_ session: String) -> [CallRecord] {
        events.compactMap { if case .callEnded(let r) = $0, r.sessionId == session { r } else { nil } }
    }

    /// Starts a call and waits for the device's answer; the session id.
    func answeredCall() async throws -> String {
        let mark = count
        try await app.startCall(devId: FaultRig.devId, timeoutSeconds: 10)
        guard let sid = await first(after: mark, { e -> String? in
            if case .received(let m, _) = e, m.event == .answer { m.sessionId } else { nil }
        }) else { throw FaultRigError("the device did not answer: \(events.suffix(5))") }
        return sid
    }

    /// Opens the answered call's video and waits for `frames` decoded frames.
    func videoFlowing(_ sid: String, frames: Int = 10) async throws {
        _ = try await app.openVideo(sessionId: sid)
        try await framesGrow(sid, by: frames)
    }

    func framesDecoded(_ sid: String) async -> Int { await app.videoStats(sessionId: sid)?.framesDecoded ?? 0 }

    /// Waits until `by` more frames than now have been decoded.
    func framesGrow(_ sid: String, by: Int, within timeout: Duration = .seconds(20)) async throws {
        let start = await framesDecoded(sid)
        let deadline = ContinuousClock.now + timeout
        while await framesDecoded(sid) < start + by {
            guard ContinuousClock.now < deadline else {
                let state = await app.videoLinkState(sessionId: sid).map { "\($0)" } ?? "no link"
                let closed = await app.disconnectReason(sessionId: sid).map { " (disconnect \($0))" } ?? ""
                throw FaultRigError("video: \(await framesDecoded(sid) - start) new frames in \(timeout), wanted \(by); link \(state)\(closed)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() async {
        await app.stop()
        pump?.cancel()
    }
}

struct FaultRigError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
