import Foundation
import TestSupport
import Testing

/// A call whose media must go through the TURN relay (issue 21, PROTOCOL.md 4 and 9.4): the device
/// joins the local stand-in's cloud, an app simulator on the stand-in's broker calls it (§3), and
/// opens video with the stand-in's coturn in its offer's `token` and relay-only ICE on its side.
///
/// How the relay is proven to carry the video:
/// - the app's ICE agent (libnice) selected a pair whose local candidate is of type `relay`;
/// - that relayed address is a UDP socket of the turnserver process (its allocation), and the
///   turnserver holds a second one (the device's allocation: it used the server the offer named);
/// - with the turnserver stopped (SIGSTOP), no frame is decoded; continued, frames come again.
@Suite("Cloud call through the TURN relay (ipcemu app call --ice-server --relay-only against the stand-in)",
       .serialized, .timeLimit(.minutes(8)), .heavy)
struct CloudRelayCallTests {
    /// A device joined through the stand-in, and the app arguments that reach it.
    struct JoinedDevice {
        let process: IPCEmuProcess
        let devId: String
        let appArguments: [String]
    }

    /// Runs the device with `profile`, pairs and activates it, and writes the app's profile (the
    /// localKey the cloud gives the app).
    static func join(_ standin: StandinProcess, uuid: String, profile: String) async throws -> JoinedDevice {
        let device = try IPCEmuProcess([
            "run", "--profile", profile, "--cloud", "tuya", "--uuid", uuid, "--authkey", CloudJoinTests.authkey,
            "--product-key", CloudJoinTests.productKey, "--state-dir", CloudJoinTests.stateDir(),
            "--iotdns", standin.ready.iotdns, "--cloud-ca", standin.ready.caFile, "--log-level", "debug",
        ])
        #expect(await device.waitFor("direct link up as acon_\(uuid)", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)")
        try await standin.bind(uuid: uuid)
        #expect(await device.waitFor("the device is online on the cloud", inStderr: true, timeout: .seconds(30)),
                "stderr: \(device.stderr)\nstand-in: \(standin.log)")
        let devId = try #require(CloudJoinTests.devId(in: device.stderr), "stderr: \(device.stderr)")
        let localKey = try #require(try await standin.localKey(devId: devId))
        let appProfile = NSTemporaryDirectory() + "cloud-relay-app-\(devId).yaml"
        try """
            identity:
              devId: \(devId)
              localKey: "\(localKey)"
              p2pPassword: "doorbell-p2p-secret"
              category: sp_dpsxj
            security: pv2.2

            """.write(toFile: appProfile, atomically: true, encoding: .utf8)
        return JoinedDevice(process: device, devId: devId, appArguments: [
            "--broker", standin.appBrokerURL, "--ca-file", standin.ready.caFile, "--profile", appProfile,
        ])
    }

    /// The stand-in's `iceToken` entry as `--ice-server` takes it: `turn:user:password@host:port?...`.
    static func iceServerArgument(_ standin: StandinProcess, password: String? = nil) throws -> (argument: String, port: Int) {
        let token = try #require(standin.ready.iceToken?.first, "the stand-in started no TURN server")
        let rest = try #require(token.urls.hasPrefix("turn:") ? token.urls.dropFirst(5) : nil, "not a TURN url: \(token.urls)")
        let hostPort = rest.split(separator: "?").first ?? rest
        let port = try #require(hostPort.split(separator: ":").last.flatMap { Int($0) })
        return ("turn:\(token.username):\(password ?? token.credential)@\(rest)", port)
    }

    /// Frame counts of the app's `video:` lines, in order (one a second while frames come).
    static func videoLineCounts(_ stdout: String) -> [Int] {
        stdout.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "           video: ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// `video summary: N frames WxH, F fps, S stamps read, ...`: N and S.
    static func summary(_ stdout: String) -> (frames: Int, stamps: Int)? {
        guard let range = stdout.range(of: "video summary: ") else { return nil }
        let text = stdout[range.upperBound...].prefix { $0 != "\n" }
        let frames = Int(text.prefix { $0.isNumber })
        guard let frames, let stampsEnd = text.range(of: " stamps read") else { return nil }
        let before = text[..<stampsEnd.lowerBound]
        let stamps = Int(String(before.reversed().prefix { $0.isNumber }.reversed()))
        return stamps.map { (frames, $0) }
    }

    /// The app's `ice: selected pair local T A:P -> remote T A:P` line: local type, address, port.
    static func selectedPair(_ stdout: String) -> (type: String, address: String, port: Int)? {
        guard let range = stdout.range(of: "ice: selected pair local ") else { return nil }
        let words = stdout[range.upperBound...].prefix { $0 != "\n" }.split(separator: " ")
        guard words.count >= 2, let colon = words[1].lastIndex(of: ":"), let port = Int(words[1][words[1].index(after: colon)...])
        else { return nil }
        return (String(words[0]), String(words[1][..<colon]), port)
    }

    /// Ports of the UDP sockets on 127.0.0.1 that process `pid` holds (from /proc: its fds'
    /// socket inodes matched against /proc/<pid>/net/udp).
    static func loopbackUDPPorts(of pid: Int32) -> Set<Int> {
        let fdDir = "/proc/\(pid)/fd"
        var inodes = Set<String>()
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: fdDir)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fdDir + "/" + fd),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
        guard let table = try? String(contentsOfFile: "/proc/\(pid)/net/udp", encoding: .utf8) else { return [] }
        var ports = Set<Int>()
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ")
            guard columns.count > 9, inodes.contains(String(columns[9])) else { continue }
            let local = columns[1].split(separator: ":")
            // 127.0.0.1 is 0100007F in the table (little-endian); the port is big-endian hex.
            guard local.count == 2, local[0] == "0100007F", let port = Int(local[1], radix: 16) else { continue }
            ports.insert(port)
        }
        return ports
    }

    /// Waits until the app has printed more than `count` `video:` lines; returns the counts.
    static func waitForVideoLines(after count: Int, _ app: IPCEmuProcess, timeout: Duration = .seconds(10)) async -> [Int] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let counts = videoLineCounts(app.stdout)
            if counts.count > count { return counts }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return videoLineCounts(app.stdout)
    }

    @Test("the app calls the device over the stand-in's broker and gets video through coturn with relay-only ICE: the selected pair is relay, the relayed address is coturn's allocation, and pausing coturn pauses the video")
    func videoThroughTheRelay() async throws {
        let uuid = CloudJoinTests.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(CloudJoinTests.authkey),\(CloudJoinTests.productKey)"], turn: true)
        defer { standin.stop() }
        let joined = try await Self.join(standin, uuid: uuid, profile: CloudJoinTests.doorbell)
        let device = joined.process
        let (ice, turnPort) = try Self.iceServerArgument(standin)
        let turnPidText = try String(contentsOfFile: standin.ready.dir + "/turnserver.pid", encoding: .utf8)
        let turnPid = try #require(Int32(turnPidText.trimmingCharacters(in: .whitespacesAndNewlines)))

        // §3 call; the doorbell profile answers after 1 s; then the P2P link (sub stream).
        let app = try IPCEmuProcess([
            "app", "call", joined.devId, "--user", "cloud-relay-caller", "--video", "--stream", "sub",
            "--ice-server", ice, "--relay-only",
        ] + joined.appArguments)
        #expect(await app.waitFor("<- answer from=\(joined.devId)", timeout: .seconds(20)), "app: \(app.stdout) \(app.stderr)")
        #expect(await app.waitFor("ice: selected pair", timeout: .seconds(20)), "app: \(app.stdout) \(app.stderr)")
        let firstLines = await Self.waitForVideoLines(after: 1, app)
        #expect(firstLines.count >= 2 && (firstLines.last ?? 0) > 0, "app: \(app.stdout)")

        // 1. The app's ICE agent selected a relayed local candidate.
        let pair = try #require(Self.selectedPair(app.stdout), "app: \(app.stdout)")
        #expect(pair.type == "relay", "selected: \(pair)")
        #expect(pair.address == "127.0.0.1")

        // 2. That address is an allocation of the turnserver (a relay socket it holds), beside the
        //    device's own (it allocated on the server the offer's token named).
        let relaySockets = Self.loopbackUDPPorts(of: turnPid).subtracting([turnPort])
        #expect(relaySockets.contains(pair.port), "coturn's relay sockets: \(relaySockets), the app's relayed port: \(pair.port)")
        #expect(relaySockets.count >= 2, "coturn's relay sockets: \(relaySockets) (the app's and the device's allocations)")

        // 3. Stopping the relay stops the video; continuing it brings the video back.
        kill(turnPid, SIGSTOP)
        var paused: (before: Int, after: Int)?
        do {
            defer { kill(turnPid, SIGCONT) }
            try await Task.sleep(for: .milliseconds(500))  // what was in flight is decoded
            let atStop = Self.videoLineCounts(app.stdout).count
            let first = await Self.waitForVideoLines(after: atStop, app, timeout: .seconds(5))
            let later = await Self.waitForVideoLines(after: first.count + 1, app, timeout: .seconds(5))
            if first.count > atStop, later.count > first.count + 1, let a = first.last, let b = later.last { paused = (a, b) }
        }
        let stopped = try #require(paused, "the app printed no video lines while coturn was stopped: \(app.stdout)")
        #expect(stopped.after == stopped.before, "frames were decoded while the relay was stopped: \(stopped)")
        let resumed = await Self.waitForVideoLines(after: Self.videoLineCounts(app.stdout).count + 2, app, timeout: .seconds(10))
        #expect((resumed.last ?? 0) > stopped.after, "no frames after coturn continued: \(app.stdout)")

        // Hang up (the app's SIGTERM): the call ends as answered, with stamped frames decoded.
        app.signal(SIGTERM)
        #expect(await app.waitForExit(timeout: .seconds(15)) == 0, "app: \(app.stdout) \(app.stderr)")
        let summary = try #require(Self.summary(app.stdout), "app: \(app.stdout)")
        #expect(summary.frames >= 20 && summary.stamps >= summary.frames * 9 / 10, "summary: \(summary)")
        #expect(app.stdout.contains("640x360"))
        #expect(device.stderr.contains("P2P link up"), "device: \(device.stderr)")
        #expect(!device.stderr.contains("connect_failed"))
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test("relay-only with a wrong TURN password: no allocation, no link, no video; the device stops the call with connect_failed after its connect timeout")
    func wrongTURNPasswordGetsNoVideo() async throws {
        let uuid = CloudJoinTests.uuid()
        let standin = try await StandinProcess.start(licences: ["\(uuid),\(CloudJoinTests.authkey),\(CloudJoinTests.productKey)"], turn: true)
        defer { standin.stop() }
        // The doorbell profile with a 4 s connect timeout.
        let doorbell = try String(contentsOfFile: CloudJoinTests.doorbell, encoding: .utf8)
        #expect(doorbell.contains("connectTimeout: 20 "))
        let profile = NSTemporaryDirectory() + "cloud-relay-doorbell-\(uuid).yaml"
        try doorbell.replacingOccurrences(of: "connectTimeout: 20 ", with: "connectTimeout: 4 ")
            .write(toFile: profile, atomically: true, encoding: .utf8)
        let joined = try await Self.join(standin, uuid: uuid, profile: profile)
        let device = joined.process
        let (ice, _) = try Self.iceServerArgument(standin, password: "not-the-password")

        let started = ContinuousClock.now
        let call = try await CLIRun.ipcemu([
            "app", "call", joined.devId, "--user", "cloud-relay-refused", "--video", "--stream", "sub",
            "--ice-server", ice, "--relay-only",
        ] + joined.appArguments)
        let took = ContinuousClock.now - started
        // The call was answered, then the device stopped it: the link never came up.
        #expect(call.status == 0, "call: \(call.stdout) \(call.stderr)")
        #expect(call.stdout.contains("<- answer from=\(joined.devId)"), "call: \(call.stdout)")
        #expect(call.stdout.contains("<- stop from=\(joined.devId)") && call.stdout.contains("reason=connect_failed"),
                "call: \(call.stdout)")
        #expect(took >= .seconds(4), "ended after \(took), before the 4 s connect timeout")
        #expect(!call.stdout.contains("ice: selected pair"), "a pair was selected: \(call.stdout)")
        let summary = try #require(Self.summary(call.stdout), "call: \(call.stdout)")
        #expect(summary.frames == 0, "summary: \(summary)")
        #expect(device.stderr.contains("connect_failed"), "device: \(device.stderr)")
        #expect(!device.stderr.contains("P2P link up"), "device: \(device.stderr)")
        device.signal(SIGTERM)
        #expect(await device.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test("--ice-server values that are not a STUN or TURN server, and --relay-only without a TURN server, are refused with the reason")
    func badICEServerArguments() async throws {
        let refused: [(String, String)] = [
            ("http://127.0.0.1:3478", "starts with stun:, turn: or turns:"),
            ("turn:127.0.0.1:3478", "needs user:password@host"),
            ("stun:user:pw@127.0.0.1:3478", "takes no user:password"),
            ("turn:user:pw@127.0.0.1:99999", "port 1-65535"),
            ("turn:user:pw@127.0.0.1:3478?transport=sctp", "?transport=udp or ?transport=tcp"),
            ("turn:userwithoutpassword@127.0.0.1", "user:password@ before the host"),
        ]
        for (value, reason) in refused {
            let run = try await CLIRun.ipcemu(["app", "call", "dev", "--video", "--ice-server", value])
            #expect(run.status == 64, "\(value): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(reason), "\(value): \(run.stderr)")
        }
        let relayWithoutTURN = try await CLIRun.ipcemu(["app", "call", "dev", "--video", "--ice-server", "stun:127.0.0.1", "--relay-only"])
        #expect(relayWithoutTURN.status == 64 && relayWithoutTURN.stderr.contains("--relay-only needs a TURN server"),
                "\(relayWithoutTURN.status) \(relayWithoutTURN.stderr)")
    }
}
