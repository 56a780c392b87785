import AppSimulator
import CallEngine
import CallRuntime
import ControlAPI
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// The first executable named `name` on PATH.
func onPath(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

extension ControlAPI {
    @Suite("CLI and processes") struct Processes {
        @Test("ipcemu press|answer|hangup|status|faults talk to the API; errors are clear")
        func cliWrappers() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }) { f in
                let url = ["--control", f.server.url]
                let status = try await CLIRun.ipcemu(["status"] + url)
                #expect(status.status == 0, "\(status.stderr)")
                #expect(try JSONValue.parse(Array(status.stdout.utf8))["devices"]?.array?.count == 1)
                let (_, alice) = try await f.app("user-alice")
                let press = try await CLIRun.ipcemu(["press", "--target", "user-alice", "--timeout", "10"] + url)
                #expect(press.status == 0, "\(press.stderr)")
                let session = press.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(await alice.first { $0.incoming } == session)
                let cancel = try await CLIRun.ipcemu(["cancel", "--device", f.devId] + url)
                #expect(cancel.status == 0)
                #expect(await f.waitForPhase(.idle))
                let answer = try await CLIRun.ipcemu(["answer"] + url)
                #expect(answer.status == 1)
                #expect(answer.stderr.contains("HTTP 409: cannot answer while idle"))
                let faults = try await CLIRun.ipcemu(["faults", "--reply-delay-ms", "250", "--busy"] + url)
                #expect(faults.status == 0, "\(faults.stderr)")
                #expect(await f.device.faults.replyDelayMs == 250)
                #expect(await f.device.status.actingBusy)
                let clear = try await CLIRun.ipcemu(["faults", "--clear"] + url)
                #expect(clear.status == 0)
                #expect(await f.device.faults == DeviceFaultsReset.none)
                let unknown = try await CLIRun.ipcemu(["hangup", "--device", "nope"] + url)
                #expect(unknown.status == 1)
                #expect(unknown.stderr.contains("HTTP 404: no device 'nope'"))
                let port = try freeLoopbackPort()
                let down = try await CLIRun.ipcemu(["status", "--control", "http://127.0.0.1:\(port)"])
                #expect(down.status == 1)
                #expect(down.stderr.contains("cannot reach the control API at http://127.0.0.1:\(port)"))
                let badURL = try await CLIRun.ipcemu(["status", "--control", "ftp://x"])
                #expect(badURL.status != 0)
                #expect(badURL.stderr.contains("http://HOST:PORT"))
            }
        }

        @Test("ipcemu run refuses a non-loopback --control without --control-token, before starting anything")
        func runRefusesOpenBind() async throws {
            let run = try await CLIRun.ipcemu(["run", "--profile", packageRootPath + "/device-profiles/doorbell.yaml",
                                               "--control", "0.0.0.0:0"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("requires --control-token"))
        }

        @Test("ipcemu run --control serves the console; the token applies")
        func runServesControl() async throws {
            try await withBroker { broker in
                let port = try freeLoopbackPort()
                let child = try IPCEmuProcess(["run", "--profile", packageRootPath + "/device-profiles/doorbell.yaml",
                                               "--broker", "mqtt://127.0.0.1:\(broker.port)",
                                               "--control", "127.0.0.1:\(port)", "--control-token", "tok"])
                #expect(await child.waitFor("Control API and console: http://127.0.0.1:\(port)/"))
                let client = try ControlHTTPClient(baseURL: "http://127.0.0.1:\(port)", token: "tok")
                let page = try await client.request("GET", "/")
                #expect(page.status == 200)
                #expect(page.text.contains("<video id=\"phone-video\""))
                #expect(!page.text.contains("https://"))
                #expect(try await ControlHTTPClient(baseURL: "http://127.0.0.1:\(port)").request("GET", "/api/devices").status == 401)
                #expect(try await client.request("GET", "/api/phone").json?["userId"]?.string == "user-alice")
                child.signal(SIGTERM)
                #expect(await child.waitForExit(timeout: .seconds(10)) == 0)
            }
        }

        @Test("SIGKILL mid-activity leaves only whole journal lines; a restart appends after them")
        func journalSurvivesSIGKILL() async throws {
            try await withBroker { broker in
                let dir = try TemporaryDirectory(prefix: "ipcemu-journal-kill")
                let args = ["run", "--profile", packageRootPath + "/device-profiles/doorbell.yaml",
                            "--broker", "mqtt://127.0.0.1:\(broker.port)", "--journal", dir.path, "--answer", "answer"]
                let file = dir.file("ipcemu-doorbell-0001.jsonl")
                let first = try IPCEmuProcess(args)
                #expect(await first.waitFor("is online"))
                let app = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "alice"),
                                      log: EventLog(minimumLevel: .error))
                try await app.start()
                try await app.add(DeviceAddress(devId: "ipcemu-doorbell-0001"))
                // Calls back to back until the journal has grown, then SIGKILL in the middle of one.
                let calling = Task {
                    while !Task.isCancelled {
                        _ = try? await app.startCall(devId: "ipcemu-doorbell-0001", timeoutSeconds: 5)
                        _ = await phaseOf(app, becomes: .answered, within: .seconds(3))
                        try? await Task.sleep(for: .milliseconds(30))
                        try? await app.hangUp()
                        try? await app.cancel()
                        _ = await phaseOf(app, becomes: .idle, within: .seconds(2))
                    }
                }
                #expect(await eventually(timeout: .seconds(20)) {
                    ((try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").count ?? 0) >= 30
                })
                _ = await phaseOf(app, becomes: .answered, within: .seconds(2))
                first.signal(SIGKILL)
                _ = await first.waitForExit(timeout: .seconds(5))
                calling.cancel()
                _ = await calling.value
                await app.stop()

                let afterKill = try String(contentsOfFile: file, encoding: .utf8)
                #expect(afterKill.hasSuffix("\n"), "the file ends in a whole line")
                let killedLines = afterKill.split(separator: "\n")
                #expect(killedLines.count >= 30)
                for line in killedLines { #expect((try? JSONValue.parse(Array(line.utf8))) != nil, "torn line: \(line)") }

                let second = try IPCEmuProcess(args)
                #expect(await second.waitFor("is online"))
                let app2 = try AppUser(userId: "user-bob", connection: broker.clientOptions(clientID: "bob"),
                                       log: EventLog(minimumLevel: .error))
                try await app2.start()
                try await app2.add(DeviceAddress(devId: "ipcemu-doorbell-0001"))
                let session = try await app2.startCall(devId: "ipcemu-doorbell-0001", timeoutSeconds: 5)
                #expect(await phaseOf(app2, becomes: .answered))
                try await app2.hangUp()
                #expect(await eventually(timeout: .seconds(5)) {
                    ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").contains(#""outcome":"hungUp","peers":["user-bob"]"#)
                })
                await app2.stop()
                second.signal(SIGTERM)
                #expect(await second.waitForExit(timeout: .seconds(10)) == 0)

                let final = try String(contentsOfFile: file, encoding: .utf8)
                #expect(final.hasPrefix(afterKill), "earlier content untouched")
                let added = final.dropFirst(afterKill.count).split(separator: "\n")
                #expect(added.count >= 5)
                for line in final.split(separator: "\n") { #expect((try? JSONValue.parse(Array(line.utf8))) != nil, "bad line: \(line)") }
                #expect(added.contains { $0.contains(#""session":"\#(session)""#) })
            }
        }

        @Test("headless Chromium: press in the console, the phone panel rings, Accept answers, the device's live video plays over WebRTC, HD/SD switches its size and back, Hang up",
              .enabled(if: onPath("chromium") != nil && onPath("python3") != nil))
        func consoleInChromium() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }, phone: true) { f in
                let script = packageRootPath + "/scripts/console-check.py"
                var args = [script, f.server.url + "/", "--video", "--switch"]
                if let shot = ProcessInfo.processInfo.environment["IPCEMU_CONSOLE_SCREENSHOT"] { args += ["--screenshot", shot] }
                let run = try await runProgram(try #require(onPath("python3")), args)
                #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
                print("console-check.py: \(run.stdout)", terminator: "")
                let seen = try JSONValue.parse(Array(run.stdout.utf8))
                #expect(seen["rang"]?.bool == true)
                #expect(seen["answered"]?.bool == true)
                #expect(seen["videoPlaying"]?.bool == true)
                let first = seen["framesFirst"]?.int ?? 0, later = seen["framesAfter2s"]?.int ?? 0
                #expect(later >= first + 20, "frames decoded in 2 s: \(later - first)")
                // HD/SD: main -> sub -> main on the same track (302 resolution), sizes from the profile.
                let video = try #require(f.device.profile.capabilities.video)
                let main = "\(video.main.width)x\(video.main.height)", sub = "\(video.sub.width)x\(video.sub.height)"
                let sizes = (seen["sizes"]?.array ?? []).compactMap(\.string)
                #expect(sizes == [main, sub, main], "sizes seen: \(sizes)")
                #expect(seen["sizeText"]?.string == "video \(main)")
                #expect(seen["hungUp"]?.bool == true)
                #expect(await f.waitForPhase(.idle))
                let last = await f.device.status.lastCall
                #expect(last?.answeredBy == "user-alice")
                #expect(last?.outcome == .hungUp)
                #expect(await f.device.mediaLinks.isEmpty, "the device closed the link")
                #expect(await f.phone?.state().video.rawValue == "none")
            }
        }
    }
}

enum DeviceFaultsReset {
    static let none = DeviceFaults()
}
