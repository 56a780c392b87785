import AppSimulator
import CallEngine
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// `ipcemu run` and `ipcemu fleet` as service groups, through real processes on a real broker:
/// the shutdown order on SIGTERM, start-up failures found before any device is online, the
/// shutdown deadline and the second signal.
@Suite("Lifecycle: start-up checks and shutdown order", .serialized, .timeLimit(.minutes(8)), .heavy)
struct LifecycleTests {
    let doorbell = packageRootPath + "/device-profiles/doorbell.yaml"
    let devId = "ipcemu-doorbell-0001"
    var statusTopic: String { "smart/device/meta/\(devId)/online" }

    func payload(_ m: MQTTMessage) -> String { String(decoding: m.payload, as: UTF8.self) }

    /// Every retained message on `topic` now: subscribes, then publishes a marker on a topic of its
    /// own; the broker sends retained messages on subscribing, so once the marker is back, any
    /// retained status would have arrived before it.
    func retained(on topic: String, _ broker: MosquittoBroker) async throws -> [MQTTMessage] {
        let marker = "test/marker/\(UInt32.random(in: 0...UInt32.max))"
        let probe = try await MessageCollector.start(broker: broker, filters: [topic, marker])
        try probe.client.publish(topic: marker, payload: Array("done".utf8), qos: 1)
        let back = await probe.waitForMessages(count: 1, topic: marker)
        #expect(back.count == 1, "the marker came back")
        let found = probe.messages.filter { $0.topic != marker }
        await probe.stop()
        return found
    }

    @Test("SIGTERM during a call: hang_up (reason shutdown) before offline; the journal has the ended call; the device's own offline status is retained before exit")
    func sigtermOrder() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory(prefix: "ipcemu-lifecycle")
        let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url, "--answer", "answer:0",
                                     "--journal", dir.path, "--control", "127.0.0.1:0", "--console-user", "user-bob"])
        #expect(await run.waitFor("is online"), "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        let out = "smart/device/out/\(devId)"
        let watcher = try await MessageCollector.start(broker: broker, filters: [out, statusTopic])
        #expect(await watcher.waitForMessages(count: 1, topic: statusTopic).count == 1, "the retained online status")

        let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "user-alice"))
        try await app.start()
        try await app.add(DeviceAddress(devId: devId))
        var events = await app.events().makeAsyncIterator()
        var session: String?
        try await app.startCall(devId: devId, timeoutSeconds: 10)
        while let e = await events.next() {
            if case .received(let m, _) = e, m.event == .answer { session = m.sessionId; break }
        }
        let sessionId = try #require(session)

        run.signal(SIGTERM)
        let exit = await run.waitForExit(timeout: .seconds(5))
        #expect(exit == 0, "stderr: \(run.stderr)")

        // On the wire: the call's end (reason shutdown) came before the offline status.
        let seen = watcher.messages
        let hangUp = seen.firstIndex { $0.topic == out && payload($0).contains("hang_up") && payload($0).contains("shutdown") }
        let offline = seen.firstIndex { $0.topic == statusTopic && payload($0).contains(#""online":false"#) }
        #expect(hangUp != nil && offline != nil, "\(seen.map { "\($0.topic) \(payload($0))" })")
        if let hangUp, let offline { #expect(hangUp < offline, "hang_up before offline") }
        await watcher.stop()

        // The retained status is the device's own clean offline (with its time), not its will.
        let status = try await retained(on: statusTopic, broker)
        #expect(status.count == 1)
        #expect(status.first.map { payload($0).contains(#""online":false,"t":"#) } == true, "\(status.map(payload))")
        #expect(status.first?.retain == true)

        // The journal was finished before the process exited: its last lines are the shutdown's.
        let text = try String(contentsOfFile: dir.path + "/\(devId).jsonl", encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.hasSuffix("\n"))
        #expect(lines.contains { $0.contains(#""kind":"event""#) && $0.contains(#""direction":"out""#) && $0.contains(#""event":"hang_up""#)
            && $0.contains(#""reason":"shutdown""#) && $0.contains(sessionId) }, "\(lines.suffix(3))")
        #expect(lines.last.map { $0.contains(#""kind":"call""#) && $0.contains(sessionId) } == true, "\(lines.suffix(3))")
        await app.stop()
    }

    @Test("a taken --control port: exit non-zero naming the address, and the device never went online")
    func takenControlPort() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let taken = try SilentListener()
        let run = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--broker", broker.url,
                                           "--control", "127.0.0.1:\(taken.port)"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--control: cannot listen on 127.0.0.1:\(taken.port)"), "\(run.stderr)")
        #expect(!run.stdout.contains("is online"))
        #expect(try await retained(on: statusTopic, broker).isEmpty, "no online status, and no will either")
    }

    @Test("an unwritable --journal folder: exit non-zero naming it, and the device never went online")
    func unwritableJournal() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory(prefix: "ipcemu-lifecycle")
        // A folder under a plain file cannot be made, even by root.
        let file = dir.path + "/not-a-folder"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let run = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--broker", broker.url,
                                           "--journal", file + "/journal"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--journal: cannot create journal directory '\(file)/journal'"), "\(run.stderr)")
        #expect(try await retained(on: statusTopic, broker).isEmpty)
    }

    @Test("a camera that cannot be opened: exit non-zero naming it, before the device is online")
    func missingCamera() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let dir = try TemporaryDirectory(prefix: "ipcemu-lifecycle")
        let yaml = try String(contentsOfFile: doorbell, encoding: .utf8).replacingOccurrences(
            of: "  type: testPattern", with: "  type: v4l2\n  device: /dev/video-ipcemu-missing\n  #")
        #expect(yaml.contains("/dev/video-ipcemu-missing"))
        let profile = dir.path + "/doorbell.yaml"
        try yaml.write(toFile: profile, atomically: true, encoding: .utf8)
        let run = try await CLIRun.ipcemu(["run", "--profile", profile, "--broker", broker.url])
        #expect(run.status != 0)
        #expect(run.stderr.contains("camera /dev/video-ipcemu-missing cannot be opened"), "\(run.stderr)")
        #expect(try await retained(on: statusTopic, broker).isEmpty)
    }

    @Test("past --shutdown-deadline the process exits anyway (status 1); a second SIGTERM exits at once")
    func deadlineAndSecondSignal() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        for second in [false, true] {
            let run = try IPCEmuProcess(["run", "--profile", doorbell, "--broker", broker.url,
                                         "--shutdown-deadline", second ? "20" : "0.05"])
            #expect(await run.waitFor("is online"), "stderr: \(run.stderr)")
            // A broker that stops answering: the offline status waits for an acknowledgement.
            let pid = try #require(broker.pid)
            kill(pid, SIGSTOP)
            run.signal(SIGTERM)
            if second {
                try await Task.sleep(for: .milliseconds(200))
                run.signal(SIGTERM)
                let exit = await run.waitForExit(timeout: .seconds(1))
                #expect(exit == 128 + SIGTERM, "stderr: \(run.stderr)")
                #expect(run.stderr.contains("second SIGTERM during shutdown: exiting now"))
            } else {
                // Unhindered, the offline status would wait 800 ms for its acknowledgement and
                // the process exit 0; the deadline (and its half-second backstop) comes first.
                let exit = await run.waitForExit(timeout: .seconds(5))
                #expect(exit == 1, "stderr: \(run.stderr)")
                #expect(run.stderr.contains("shutdown did not finish within"), "\(run.stderr)")
            }
            kill(pid, SIGCONT)
        }
    }

    @Test("a --shutdown-deadline that is not a number of seconds in range is refused, naming the option")
    func badDeadline() async throws {
        for value in ["0", "nan", "inf", "1e300"] {
            let run = try await CLIRun.ipcemu(["run", "--profile", doorbell, "--shutdown-deadline", value])
            #expect(run.status != 0)
            #expect(run.stderr.contains("--shutdown-deadline must be"), "\(value): \(run.stderr)")
        }
    }

    @Test("ipcemu fleet: a taken --control port is found before any device is online")
    func fleetTakenControlPort() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let taken = try SilentListener()
        let dir = try TemporaryDirectory(prefix: "ipcemu-lifecycle")
        let template = dir.path + "/door.yaml"
        try String(contentsOfFile: doorbell, encoding: .utf8)
            .replacingOccurrences(of: "devId: ipcemu-doorbell-0001", with: "devId: \"life-{index:2}\"")
            .write(toFile: template, atomically: true, encoding: .utf8)
        let run = try await CLIRun.ipcemu(["fleet", "--profile", template + ":3", "--broker", broker.url,
                                           "--control", "127.0.0.1:\(taken.port)"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--control: cannot listen on 127.0.0.1:\(taken.port)"), "\(run.stderr)")
        #expect(try await retained(on: "smart/device/meta/+/online", broker).isEmpty)
    }
}
