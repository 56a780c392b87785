import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// `ipcemu app wake`, `ipcemu app dps` and `ipcemu app listen` with doorbell presses (PROTOCOL.md
/// 8), each a real process against `ipcemu run` with a shipped doorbell profile.
@Suite("ipcemu app: doorbells (PROTOCOL.md 8)", .serialized, .timeLimit(.minutes(8)), .heavy)
struct AppDoorbellCommandTests {
    let battery = "ipcemu-battdoor-0001"
    let ac = "ipcemu-acdoor-0001"

    /// A shipped profile with some lines replaced (short timers), written to a temporary file.
    static func profile(_ name: String, replacing edits: [(String, String)]) throws -> String {
        var text = try String(contentsOfFile: packageRootPath + "/device-profiles/" + name, encoding: .utf8)
        for (old, new) in edits {
            guard text.contains(old) else { throw ProfileEditError(what: old) }
            text = text.replacingOccurrences(of: old, with: new)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-\(UUID().uuidString)-\(name)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    struct ProfileEditError: Error { var what: String }

    /// The control API's URL `ipcemu run --control 127.0.0.1:0` printed.
    static func controlURL(_ run: IPCEmuProcess) async -> String? {
        guard await run.waitFor("Control API and console: ") else { return nil }
        let line = run.stdout.split(separator: "\n").first { $0.contains("Control API and console: ") }
        return line?.split(separator: " ").first { $0.hasPrefix("http://") }
            .map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
    }

    static func dps(_ run: CLIRun) throws -> [String: JSONValue] {
        guard case .object(let o) = try JSONValue.parse(Array(run.stdout.utf8)), case .object(let dps)? = o["dps"] else {
            throw ProfileEditError(what: "no dps object in \(run.stdout)")
        }
        return dps
    }

    @Test("app wake: the battery doorbell falls asleep (dps --until 149=false), wake prints a latency of at least wakeLatency, a second wake finds it awake; no device: exit 6")
    func wake() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let path = try Self.profile("battery-doorbell.yaml", replacing: [("sleepAfter: 60 ", "sleepAfter: 2 ")])
        let run = try IPCEmuProcess(["run", "--profile", path, "--broker", broker.url])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")

        let common = ["--broker", broker.url, "--profile", path]
        let asleep = try await CLIRun.ipcemu(["app", "dps", battery, "--until", "149=false", "--wait", "10"] + common)
        #expect(asleep.status == 0, "\(asleep.stderr)")
        #expect(try Self.dps(asleep)["149"] == .bool(false))
        // Already asleep: no report comes again, the retained meta's "awake":false says it.
        let stillAsleep = try await CLIRun.ipcemu(["app", "dps", battery, "--until", "149=false", "--wait", "3"] + common)
        #expect(stillAsleep.status == 0, "\(stillAsleep.stdout) \(stillAsleep.stderr)")

        let woke = try await CLIRun.ipcemu(["app", "wake", battery] + common)
        #expect(woke.status == 0, "\(woke.stderr)")
        let ms = woke.stdout.split(separator: " ").firstIndex(of: "after").flatMap { i in
            Double(woke.stdout.split(separator: " ")[i + 1])
        }
        // wakeLatency is 1.0 s in the shipped profile.
        #expect(ms.map { $0 >= 950 && $0 < 5000 } == true, "\(woke.stdout)")
        #expect(!woke.stdout.contains("it was awake"))

        let again = try await CLIRun.ipcemu(["app", "wake", battery] + common)
        #expect(again.status == 0 && again.stdout.contains("(it was awake)"), "\(again.stdout) \(again.stderr)")

        let nobody = try await CLIRun.ipcemu(["app", "wake", "no-such-door", "--wait", "1"] + common)
        #expect(nobody.status == 6, "\(nobody.stdout) \(nobody.stderr)")
        run.signal(SIGTERM)
        _ = await run.waitForExit(timeout: .seconds(5))
    }

    @Test("app dps: --set typed by the catalogue (147=30 an int; 146=1 the string \"1\", refused and reported back), --query IDS, --query all")
    func dataPoints() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let path = packageRootPath + "/device-profiles/battery-doorbell.yaml"
        let run = try IPCEmuProcess(["run", "--profile", path, "--broker", broker.url])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let common = ["--broker", broker.url, "--profile", path]

        let set = try await CLIRun.ipcemu(["app", "dps", battery, "--set", "147=30"] + common)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try Self.dps(set)["147"] == .int(30))
        // DP 146 is a read-only enum: "1" (a string, by the catalogue) is refused, "0" comes back.
        let refused = try await CLIRun.ipcemu(["app", "dps", battery, "--set", "146=1"] + common)
        #expect(try Self.dps(refused)["146"] == .string("0"), "\(refused.stdout)")

        let some = try await CLIRun.ipcemu(["app", "dps", battery, "--query", "145", "149"] + common)
        let someDPs = try Self.dps(some)
        #expect(someDPs["145"] == .int(100) && someDPs["149"] == .bool(true), "\(some.stdout)")
        let all = try await CLIRun.ipcemu(["app", "dps", battery, "--query"] + common)
        #expect(try Self.dps(all)["147"] == .int(30), "\(all.stdout)")

        let bad = try await CLIRun.ipcemu(["app", "dps", battery, "145"] + common)
        #expect(bad.status != 0 && bad.stderr.contains("--query"), "\(bad.stderr)")
        let badSet = try await CLIRun.ipcemu(["app", "dps", battery, "--set", "nope"] + common)
        #expect(badSet.status != 0, "\(badSet.stderr)")
        run.signal(SIGTERM)
        _ = await run.waitForExit(timeout: .seconds(5))
    }

    @Test("app listen --answer accept --video: a press of the AC doorbell rings, is accepted, answered, heartbeats go, video frames arrive, --hangup-after stops it")
    func listenAcceptsDoorbell() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let path = packageRootPath + "/device-profiles/ac-doorbell.yaml"
        let run = try IPCEmuProcess(["run", "--profile", path, "--broker", broker.url, "--control", "127.0.0.1:0"])
        let control = try #require(await Self.controlURL(run), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        #expect(await run.waitFor("is online"))

        let listen = try IPCEmuProcess(["app", "listen", "--answer", "accept", "--hangup-after", "3", "--calls", "1", "--video",
                                        "--heartbeat-interval", "0.5", "--user", "user-alice", "--broker", broker.url, "--profile", path])
        #expect(await listen.waitFor("is waiting for calls", inStderr: true), "\(listen.stderr)")
        let http = try ControlHTTPClient(baseURL: control)
        let press = try await http.request("POST", "/api/devices/\(ac)/press", json: .object([:]))
        #expect(press.status == 200, "\(press.text)")
        guard case .object(let o)? = press.json, case .string(let callId)? = o["sessionId"] else {
            Issue.record("no sessionId in \(press.text)")
            return
        }
        let status = await listen.waitForExit(timeout: .seconds(30))
        let out = listen.stdout
        #expect(status == 0, "\(out)\n\(listen.stderr)")
        #expect(out.contains("<- 43 press from=\(ac) call=\(callId) etype=ac_doorbell"), "\(out)")
        #expect(out.contains("ringing: doorbell \(ac) was pressed (call \(callId))"))
        #expect(out.contains("-> video_doorbell accept to=\(ac) call=\(callId)"))
        #expect(out.contains("<- video_doorbell answered from=\(ac) call=\(callId) uid=user-alice"))
        #expect(out.contains("<- video_doorbell heartbeat from=\(ac)"))
        #expect(out.contains("-> video_doorbell stop to=\(ac) call=\(callId)"))
        #expect(out.contains("call ended: hungUp"))
        let summary = out.split(separator: "\n").first { $0.contains("video summary: ") }
        let frames = summary.flatMap { Int($0.components(separatedBy: "video summary: ")[1].split(separator: " ")[0]) }
        #expect((frames ?? 0) > 0, "\(out)")
        run.signal(SIGTERM)
        _ = await run.waitForExit(timeout: .seconds(5))
    }

    @Test("app listen --answer stop: the only household user declines (stop); the device's timeout follows (every user declined)")
    func listenDeclinesDoorbell() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let path = try Self.profile("ac-doorbell.yaml", replacing: [("household: [user-alice, user-bob]", "household: [user-alice]")])
        let run = try IPCEmuProcess(["run", "--profile", path, "--broker", broker.url, "--control", "127.0.0.1:0"])
        let control = try #require(await Self.controlURL(run), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        #expect(await run.waitFor("is online"))
        let listen = try IPCEmuProcess(["app", "listen", "--answer", "stop", "--user", "user-alice",
                                        "--broker", broker.url, "--profile", path])
        #expect(await listen.waitFor("is waiting for calls", inStderr: true), "\(listen.stderr)")
        let press = try await ControlHTTPClient(baseURL: control).request("POST", "/api/devices/\(ac)/press", json: .object([:]))
        guard case .object(let o)? = press.json, case .string(let callId)? = o["sessionId"] else {
            Issue.record("no sessionId in \(press.text)")
            return
        }
        #expect(await listen.waitFor("<- video_doorbell timeout from=\(ac) call=\(callId)", timeout: .seconds(10)), "\(listen.stdout)")
        let out = listen.stdout
        #expect(out.contains("-> video_doorbell stop to=\(ac) call=\(callId)"), "\(out)")
        #expect(out.contains("call ended: rejected"), "\(out)")
        listen.signal(SIGTERM)
        #expect(await listen.waitForExit(timeout: .seconds(5)) == 0)
        run.signal(SIGTERM)
        _ = await run.waitForExit(timeout: .seconds(5))
    }
}
