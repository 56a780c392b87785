import AppSimulator
import CallEngine
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// `ipcemu run` driven as a user would: a real process, a real broker, the app simulator.
@Suite("ipcemu run", .serialized, .timeLimit(.minutes(8)), .heavy)
struct RunCommandTests {
    let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    let devId = "ipcemu-doorbell-0001"

    func app(_ broker: MosquittoBroker, user: String = "user-alice") async throws -> AppUser {
        let app = try AppUser(userId: user, connection: broker.clientOptions(clientID: user))
        try await app.start()
        try await app.add(DeviceAddress(devId: devId))
        return app
    }

    @Test("SIGTERM during a call: the app gets hang_up (reason shutdown), status goes offline, exit 0 within 2 s")
    func sigtermDuringCall() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", "answer:0"])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")

        let app = try await app(broker)
        var events = await app.events().makeAsyncIterator()
        try await app.startCall(devId: devId, timeoutSeconds: 10)
        var answered = false
        while let e = await events.next() {
            if case .received(let m, _) = e, m.event == .answer { answered = true; break }
        }
        #expect(answered)

        let statusTopic = "smart/device/meta/\(devId)/online"
        let collector = try await MessageCollector.start(broker: broker, filters: [statusTopic])
        // The retained status arrives first: online.
        let first = await collector.waitForMessages(count: 1, topic: statusTopic)
        #expect(first.first.map { String(decoding: $0.payload, as: UTF8.self).contains(#""online":true"#) } == true)

        let sent = ContinuousClock.now
        run.signal(SIGTERM)
        var hangUp: CallMessage?
        var record: CallRecord?
        while let e = await events.next() {
            if case .received(let m, _) = e, m.event == .hangUp { hangUp = m }
            if case .callEnded(let r) = e { record = r; break }
        }
        #expect(hangUp?.reason == "shutdown")
        #expect(record?.sdkError == .peerHungUp)
        let exit = await run.waitForExit(timeout: .seconds(2))
        #expect(exit == 0, "exit \(String(describing: exit)) after \(ContinuousClock.now - sent); stderr: \(run.stderr)")
        let after = await collector.waitForMessages(count: 2, topic: statusTopic)
        #expect(after.last.map { String(decoding: $0.payload, as: UTF8.self).contains(#""online":false"#) } == true)
        await collector.stop()
        // A fresh subscriber sees the retained offline status.
        let fresh = try await MessageCollector.start(broker: broker, filters: [statusTopic])
        let retained = await fresh.waitForMessages(count: 1, topic: statusTopic)
        #expect(retained.first?.retain == true)
        #expect(retained.first.map { String(decoding: $0.payload, as: UTF8.self).contains(#""online":false"#) } == true)
        await fresh.stop()
        await app.stop()
    }

    @Test("no --broker: a private broker starts, and the printed command reaches the device")
    func embeddedBroker() async throws {
        let run = try IPCEmuProcess(["run", "--profile", doorbell])
        #expect(await run.waitFor("ipcemu app call"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let out = run.stdout
        let url = try #require(out.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.hasPrefix("mqtt://127.0.0.1:") }.map(String.init))
        let probe = try await CLIRun.ipcemu(["app", "probe", devId, "--broker", url, "--profile", doorbell])
        #expect(probe.status == 0, "\(probe.stderr)")
        let body = try JSONValue.parse(Array(probe.stdout.utf8))
        guard case .object(let o) = body else { Issue.record("probe printed no JSON object"); return }
        #expect(o["support"] == .bool(true))
        #expect(o["devId"] == .string(devId))

        let call = try await CLIRun.ipcemu(["app", "call", devId, "--broker", url, "--profile", doorbell, "--hangup-after", "0.2"])
        #expect(call.status == 0, "\(call.stdout)\n\(call.stderr)")
        #expect(call.stdout.contains("<- ring"))
        #expect(call.stdout.contains("<- answer"))
        run.signal(SIGINT)
        #expect(await run.waitForExit(timeout: .seconds(3)) == 0)
    }

    @Test("the app call's exit code tells the outcome")
    func callExitCodes() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        for (policy, code, word) in [("reject", Int32(3), "rejected"), ("busy", 4, "busy"), ("ignore", 5, "not answered")] {
            let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", policy])
            #expect(await run.waitFor("is online"))
            let call = try await CLIRun.ipcemu(["app", "call", devId, "--broker", broker.url, "--timeout", "1"])
            #expect(call.status == code, "policy \(policy): \(call.stdout) \(call.stderr)")
            #expect(call.stderr.contains(word))
            run.signal(SIGTERM)
            #expect(await run.waitForExit(timeout: .seconds(3)) == 0)
        }
        // Nobody there: no device answers at all.
        let none = try await CLIRun.ipcemu(["app", "call", "no-such-device", "--broker", broker.url, "--timeout", "1"])
        #expect(none.status == 6, "\(none.stdout) \(none.stderr)")
    }

    @Test("a broker that is down is a message and retries, not a crash")
    func brokerDown() async throws {
        let port = try freeLoopbackPort()
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", "mqtt://127.0.0.1:\(port)"])
        #expect(await run.waitFor("waiting for the broker"))
        #expect(await run.waitFor("connection refused", inStderr: true), "stderr: \(run.stderr)")
        #expect(run.process.isRunning)
        // The broker comes up on that port: the device connects.
        let broker = try await startBroker(MosquittoBroker.Configuration(port: port))
        defer { broker.stop() }
        #expect(await run.waitFor("connected broker=", inStderr: true, timeout: .seconds(15)), "stderr: \(run.stderr)")
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(3)) == 0)
    }

    @Test("bench signalling runs calls end to end and prints both percentile lines")
    func benchSignalling() async throws {
        let run = try await CLIRun.ipcemu(["bench", "signalling", "--calls", "30", "--warmup", "2", "--profile", doorbell])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("30 calls"))
        for line in ["call -> ring:", "answer -> app sees answer:"] {
            let found = run.stdout.split(separator: "\n").first { $0.contains(line) }
            #expect(found?.contains("p99") == true && found?.contains("(n=30)") == true, "\(run.stdout)")
        }
    }

    @Test("bench media: calls one after another, answer -> first frame and where the time goes, step by step",
          .timeLimit(.minutes(8)))
    func benchMediaCalls() async throws {
        let run = try await CLIRun.ipcemu(["bench", "media", "--calls", "2", "--seconds", "1", "--profile", doorbell])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let first = lines.first { $0.contains("answer -> first frame:") }
        #expect(first?.contains("(n=2)") == true, "\(run.stdout)")
        // Every step of both calls' links was seen, in order: the offer before the device's answer,
        // that before the link connected, and the first frame decoded after it was captured.
        for step in ["answer -> app link created", "link created -> offer made", "answer -> offer sent",
                     "offer sent -> device's 302 answer", "302 answer -> ICE+DTLS connected",
                     "302 answer -> device's 1st candidate", "1st candidate -> ICE connected",
                     "ICE connected -> DTLS done", "connected -> first frame captured", "first frame captured -> decoded",
                     "connected -> first video packet", "first packet -> receive branch linked",
                     "receive branch linked -> decoded"] {
            let line = lines.first { $0.contains(step) }
            #expect(line?.hasSuffix("(n=2)") == true, "\(step): \(run.stdout)")
            // Two steps may be negative: the first frame sent can be captured before the link
            // connects, and the app's link is prepared while the call rings, so it can exist
            // before the answer; and ICE may find its pair through the device's own check before
            // the device's candidate message comes (a peer-reflexive candidate).
            if !["connected -> first frame captured", "answer -> app link created", "1st candidate -> ICE connected"].contains(step) {
                let p50 = line.flatMap { $0.components(separatedBy: "p50").last?.split(separator: " ").first }.flatMap { Double($0) }
                #expect((p50 ?? -1) >= 0, "\(step) is not a positive time: \(line ?? "missing")")
            }
        }
        #expect(run.stdout.contains("frames dropped (counter gaps) 0"), "\(run.stdout)")
    }

    @Test("bench media --concurrent 3 streams three live views at once from one device process and prints the CPU curve",
          .timeLimit(.minutes(8)))
    func benchMediaConcurrent() async throws {
        let run = try await CLIRun.ipcemu([
            "bench", "media", "--concurrent", "3", "--seconds", "2", "--stream", "sub", "--decode-sample", "1",
            "--step-seconds", "0.5", "--profile", doorbell,
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("0 without video"), "\(run.stdout)")
        #expect(run.stdout.contains("CPU curve (streams: % of one core): 0:"), "\(run.stdout)")
        let first = run.stdout.split(separator: "\n").first { $0.contains("answer -> first frame:") }
        #expect(first?.contains("(n=3)") == true, "\(run.stdout)")
        // Every stream of the sub stream (15 fps) ran near its rate, and the decoded one lost nothing.
        let fps = run.stdout.split(separator: "\n").first { $0.contains("per-stream fps: min") }
        let minFPS = fps.flatMap { $0.split(separator: " ").dropFirst(3).first }.flatMap { Double($0.trimmingCharacters(in: .punctuationCharacters)) }
        #expect((minFPS ?? 0) >= 10, "\(run.stdout)")
        #expect(run.stdout.contains(", 0 frames dropped"), "\(run.stdout)")
    }

    @Test("bench media --fleet 3 calls three fleet devices, decodes one stream and says what the counted ones checked",
          .timeLimit(.minutes(8)))
    func benchMediaFleet() async throws {
        let run = try await CLIRun.ipcemu([
            "bench", "media", "--fleet", "3", "--seconds", "2", "--decode-sample", "1", "--step-seconds", "0.3",
            "--profile", doorbell,
        ])
        // The exit status also asks for 27 fps from the slowest stream, which a loaded machine may miss.
        #expect(run.stdout.contains("3 calls up, main stream, 1 decoded, 0 failed"), "\(run.stdout)\n\(run.stderr)")
        let counted = run.stdout.split(separator: "\n").first { $0.contains("counted streams (2, not decoded):") }
        #expect(counted?.contains("checked at the RTP level only, no jitter buffer, depayloader or decoder") == true, "\(run.stdout)")
        #expect(counted?.contains("packets missing by RTP sequence number") == true, "\(run.stdout)")
        #expect(counted?.contains("frames skipped by RTP timestamp") == true, "\(run.stdout)")
        #expect(run.stdout.contains("CPU curve (calls: % of one core): 0:"), "\(run.stdout)")
    }

    @Test("bad arguments and bad profiles are named, exit non-zero")
    func badArguments() async throws {
        let missing = try await CLIRun.ipcemu(["run", "--profile", "/nonexistent/profile.yaml"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("/nonexistent/profile.yaml"))

        let policy = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--answer", "sometimes"])
        #expect(policy.status != 0)
        #expect(policy.stderr.contains("--answer"))

        let url = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--broker", "http://example"])
        #expect(url.status != 0)
        #expect(url.stderr.contains("mqtt://"))

        let callType = try await CLIRun.ipcemu(["app", "call", devId, "--call-type", "7"])
        #expect(callType.status != 0)
        #expect(callType.stderr.contains("--call-type"))

        let format = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--log-format", "xml"])
        #expect(format.status != 0)
        #expect(format.stderr.contains("--log-format"))
    }
}

