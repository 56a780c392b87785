import Emulator
import Foundation
import Testing
import TestSupport

/// PROTOCOL.md 8.8 against a real HTTP server: Python's `http.server` in a child process on
/// loopback, which prints every POST it gets (path, content type, body) on a line of its own.
@Suite("Pushes of a press", .serialized)
struct PushTests {
    /// The child HTTP server. `/fail...` answers 500, `/slow...` answers after 5 s, anything else 200.
    final class PushServer: @unchecked Sendable {
        let process = Process()
        private let output = Pipe()
        private let lock = NSLock()
        private var buffer = ""
        private var lines: [String] = []

        static let script = """
            import http.server, sys, threading, time
            lock = threading.Lock()
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
                    if self.path.startswith('/slow'):
                        time.sleep(5)
                    line = 'POST ' + self.path + ' ' + self.headers.get('Content-Type', '') + ' ' + body.decode() + '\\n'
                    with lock:  # one whole line per POST, even from two handler threads at once
                        sys.stdout.write(line)
                        sys.stdout.flush()
                    self.send_response(500 if self.path.startswith('/fail') else 200)
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                def log_message(self, *args):
                    pass
            server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
            print('PORT ' + str(server.server_address[1]), flush=True)
            server.serve_forever()
            """

        init() throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-u", "-c", Self.script]
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock {
                    self.buffer += String(decoding: data, as: UTF8.self)
                    while let newline = self.buffer.firstIndex(of: "\n") {
                        self.lines.append(String(self.buffer[..<newline]))
                        self.buffer = String(self.buffer[self.buffer.index(after: newline)...])
                    }
                }
            }
            try process.run()
        }

        deinit {
            output.fileHandleForReading.readabilityHandler = nil
            // SIGKILL: the child inherits the test process's blocked signals, SIGTERM among them.
            // Not `waitUntilExit`: on Linux it spins a run loop that never finishes on a test's thread.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// Stops the server and waits (at most 5 s) until it has exited: its port is closed.
        func stop() async {
            kill(process.processIdentifier, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        }

        var all: [String] { lock.withLock { lines } }

        /// The base URL, once the server printed its port.
        func base(within timeout: Duration = .seconds(10)) async throws -> String {
            let line = try #require(await waitFor(timeout: timeout) { $0.first { $0.hasPrefix("PORT ") } })
            return "http://127.0.0.1:\(line.dropFirst(5))"
        }

        /// The POSTs received so far: path, content type, and the decoded body.
        var posts: [(path: String, contentType: String, message: PushMessage?)] {
            all.filter { $0.hasPrefix("POST ") }.map { line in
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                let body = parts.count > 3 ? parts[3] : ""
                return (parts.count > 1 ? parts[1] : "", parts.count > 2 ? parts[2] : "",
                        try? JSONDecoder().decode(PushMessage.self, from: Data(body.utf8)))
            }
        }

        func waitFor<T>(timeout: Duration = .seconds(10), _ match: ([String]) -> T?) async -> T? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let found = match(all) { return found }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return match(all)
        }

        func waitForPosts(_ count: Int) async -> Bool {
            await waitFor { lines in lines.filter { $0.hasPrefix("POST ") }.count >= count ? true : nil } ?? false
        }
    }

    static func press(_ callId: String, at ms: Int64 = 1_732_200_000_123) -> PushPress {
        PushPress(devId: "dev-push-1", callId: callId, kind: "ac_doorbell", timestampMs: ms, deviceName: "Front door")
    }

    @Test("a press: one POST per household user with the push bean's fields, and one .apns file per user")
    func postsAndFiles() async throws {
        let server = try PushServer()
        let base = try await server.base()
        let dir = try TemporaryDirectory(prefix: "ipcemu-apns")
        let sender = PushSender(configuration: PushConfiguration(url: base + "/push", apnsDir: dir.path + "/apns",
                                                                 simulatorBundle: "com.example.doorbell"))
        let outcome = await sender.send(press: Self.press("617bdf7a1732200000"), users: ["user-alice", "user-bob"])
        #expect(outcome == PushOutcome(sent: 2, filesWritten: 2))
        #expect(await server.waitForPosts(2))
        let posts = server.posts
        #expect(posts.count == 2)
        #expect(posts.allSatisfy { $0.path == "/push" && $0.contentType == "application/json" })
        let messages = posts.compactMap(\.message).sorted { $0.uid < $1.uid }
        #expect(messages == [
            PushMessage(uid: "user-alice", devid: "dev-push-1", msgid: "617bdf7a1732200000", etype: "ac_doorbell", timestamp: 1_732_200_000_123),
            PushMessage(uid: "user-bob", devid: "dev-push-1", msgid: "617bdf7a1732200000", etype: "ac_doorbell", timestamp: 1_732_200_000_123),
        ])
        for user in ["user-alice", "user-bob"] {
            let path = dir.path + "/apns/617bdf7a1732200000-\(user).apns"
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let payload = try JSONDecoder().decode(APNsPayload.self, from: data)
            #expect(payload.uid == user && payload.msgid == "617bdf7a1732200000" && payload.etype == "ac_doorbell")
            #expect(payload.timestamp == 1_732_200_000_123 && payload.devid == "dev-push-1")
            #expect(payload.aps.alert.title == "Front door")
            #expect(!payload.aps.alert.body.isEmpty)
            // The keys simctl reads, spelled as it wants them.
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["Simulator Target Bundle"] as? String == "com.example.doorbell")
            let aps = try #require(object["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] is String && alert["body"] is String)
        }
        let counters = await sender.counters
        #expect(counters.presses == 1 && counters.sent == 2 && counters.filesWritten == 2 && counters.failed == 0)
    }

    @Test("loss 1: nothing is POSTed or written, every push is counted lost; the next press (loss 0) arrives alone")
    func lossOne() async throws {
        let server = try PushServer()
        let base = try await server.base()
        let dir = try TemporaryDirectory(prefix: "ipcemu-apns")
        let sender = PushSender(configuration: PushConfiguration(url: base + "/push", apnsDir: dir.path))
        try await sender.setFaults(PushFaults(lossShare: 1))
        let lost = await sender.send(press: Self.press("aaaaaaaa1732200000"), users: ["u1", "u2", "u3"])
        #expect(lost == PushOutcome(lost: 3))
        try await sender.setFaults(PushFaults())
        let next = await sender.send(press: Self.press("bbbbbbbb1732200001"), users: ["u1"])
        #expect(next == PushOutcome(sent: 1, filesWritten: 1))
        // The later push arrived: had the lost ones been sent, they would be there before it.
        #expect(await server.waitForPosts(1))
        #expect(server.posts.map { $0.message?.msgid } == ["bbbbbbbb1732200001"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["bbbbbbbb1732200001-u1.apns"])
        let counters = await sender.counters
        #expect(counters.lost == 3 && counters.sent == 1 && counters.presses == 2)
    }

    @Test("loss 0.5 with a seeded draw loses exactly the pushes drawn below it")
    func partialLoss() async throws {
        let server = try PushServer()
        let base = try await server.base()
        let draws = LockedDraws([0.1, 0.9, 0.4, 0.7])
        let sender = PushSender(configuration: PushConfiguration(url: base + "/p"), random: { draws.next() })
        try await sender.setFaults(PushFaults(lossShare: 0.5))
        let outcome = await sender.send(press: Self.press("cccccccc1732200000"), users: ["u1", "u2", "u3", "u4"])
        #expect(outcome == PushOutcome(sent: 2, lost: 2))
        #expect(await server.waitForPosts(2))
        #expect(Set(server.posts.compactMap { $0.message?.uid }) == ["u2", "u4"])
    }

    @Test("a 500, a closed port and a slow server are failures, counted and never retried into the next press")
    func failures() async throws {
        let server = try PushServer()
        let base = try await server.base()
        let failing = PushSender(configuration: PushConfiguration(url: base + "/fail"))
        let failed = await failing.send(press: Self.press("dddddddd1732200000"), users: ["u1", "u2"])
        #expect(failed == PushOutcome(failed: 2))
        #expect(await failing.counters.lastFailure?.contains("500") == true)
        // The next press goes to a good URL: only its own pushes follow the two failed ones.
        await failing.setConfiguration(PushConfiguration(url: base + "/ok"))
        let next = await failing.send(press: Self.press("eeeeeeee1732200001"), users: ["u1"])
        #expect(next == PushOutcome(sent: 1))
        #expect(await server.waitForPosts(3))
        #expect(server.posts.map { $0.message?.msgid ?? "" } == ["dddddddd1732200000", "dddddddd1732200000", "eeeeeeee1732200001"])
        #expect(server.posts.filter { $0.path == "/ok" }.count == 1)

        // Nothing listens on the port of a server that has gone: refused at once.
        let closed = try PushServer()
        let closedBase = try await closed.base()
        await closed.stop()
        #expect(!closed.process.isRunning)
        let unreachable = PushSender(configuration: PushConfiguration(url: closedBase + "/push"))
        let clock = ContinuousClock()
        let began = clock.now
        #expect(await unreachable.send(press: Self.press("ffffffff1732200000"), users: ["u1"]) == PushOutcome(failed: 1))
        #expect(clock.now - began < .seconds(3))

        // A server slower than the timeout: a failure after the timeout, not after the server.
        let slow = PushSender(configuration: PushConfiguration(url: base + "/slow", timeout: .milliseconds(300)))
        let slowBegan = clock.now
        #expect(await slow.send(press: Self.press("11111111173220000"), users: ["u1"]) == PushOutcome(failed: 1))
        #expect(clock.now - slowBegan < .seconds(3))
        #expect(await slow.counters.failed == 1)
    }

    @Test("the delay fault holds a press's pushes; out-of-range faults are refused naming the field and change nothing")
    func delayAndValidation() async throws {
        let server = try PushServer()
        let base = try await server.base()
        let sender = PushSender(configuration: PushConfiguration(url: base + "/push"))
        try await sender.setFaults(PushFaults(delaySeconds: 0.5))
        let clock = ContinuousClock()
        let began = clock.now
        #expect(await sender.send(press: Self.press("22222222173220000"), users: ["u1"]) == PushOutcome(sent: 1))
        #expect(clock.now - began >= .milliseconds(500))
        do {
            try await sender.setFaults(PushFaults(lossShare: 1.5))
            Issue.record("a loss share of 1.5 was taken")
        } catch {
            #expect(error.field == "lossShare")
        }
        do {
            try await sender.setFaults(PushFaults(delaySeconds: -1))
            Issue.record("a negative delay was taken")
        } catch {
            #expect(error.field == "delaySeconds")
        }
        #expect(await sender.faults == PushFaults(delaySeconds: 0.5))
        // No URL and no folder: nothing to do, nothing counted but the press.
        let idle = PushSender(configuration: PushConfiguration())
        #expect(await idle.send(press: Self.press("33333333173220000"), users: ["u1"]) == PushOutcome())
    }

    @Test("apns file names cannot leave the folder")
    func fileNames() {
        #expect(APNsPayload.fileName(msgid: "617bdf7a1732200000", uid: "user-alice") == "617bdf7a1732200000-user-alice.apns")
        #expect(APNsPayload.fileName(msgid: "../x", uid: "a/b") == "_._x-a_b.apns")
        #expect(!APNsPayload.fileName(msgid: "..", uid: "/etc/passwd").contains("/"))
    }
}

/// Draws handed out in order (then 0.99), for the loss fault.
final class LockedDraws: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double]
    init(_ values: [Double]) { self.values = values }
    func next() -> Double { lock.withLock { values.isEmpty ? 0.99 : values.removeFirst() } }
}
