import AppSimulator
import CallEngine
import ControlAPI
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    @Suite("Device routes") struct DeviceRoutes {
        @Test("list, state, and 404 for an unknown device")
        func listAndState() async throws {
            try await withControl { f in
                let list = try await f.request("GET", "/api/devices")
                #expect(list.status == 200)
                let devices = list.json?["devices"]?.array ?? []
                #expect(devices.count == 1)
                #expect(devices.first?["devId"]?.string == f.devId)
                let one = try await f.request("GET", f.base)
                #expect(one.status == 200)
                #expect(one.json?["phase"]?.string == "idle")
                #expect(one.json?["connected"]?.bool == true)
                #expect(one.json?["media"]?["framesSent"]?.int == 0)
                let missing = try await f.request("GET", "/api/devices/nope")
                #expect(missing.status == 404)
                #expect(missing.json?["field"]?.string == "devId")
                #expect(missing.json?["error"]?.string?.contains("nope") == true)
            }
        }

        @Test("press rings the targets; the app answers; hang up over HTTP ends it; answer while idle is 409")
        func pressAndHangUp() async throws {
            try await withControl { f in
                let (app, alice) = try await f.app("user-alice")
                let press = try await f.request("POST", f.base + "/press", .object([
                    "targets": .array([.string("user-alice")]), "callType": .int(1), "timeout": .int(10),
                ]))
                #expect(press.status == 200)
                let session = try #require(press.json?["sessionId"]?.string)
                #expect(press.json?["device"]?["phase"]?.string == "ringingOutgoing")
                let rang = await alice.first { $0.incoming }
                #expect(rang == session)
                // The app answers (its own API), then the operator hangs up over HTTP.
                try await app.answer()
                #expect(await f.waitForPhase(.answered))
                let hang = try await f.request("POST", f.base + "/hangup")
                #expect(hang.status == 200)
                #expect(hang.json?["phase"]?.string == "idle")
                let ended = await alice.first { $0.ended }
                #expect(ended?.outcome == .hungUp)
                #expect(ended?.sdkError == .peerHungUp)
                let again = try await f.request("POST", f.base + "/answer")
                #expect(again.status == 409)
                #expect(again.json?["error"]?.string == "cannot answer while idle")
            }
        }

        @Test("incoming calls: manual policy set over HTTP, then answer and reject over HTTP; cancel while idle is 409")
        func incomingAnswerReject() async throws {
            try await withControl { f in
                let policy = try await f.request("PUT", f.base + "/answer-policy", .object(["policy": .string("manual")]))
                #expect(policy.status == 200)
                #expect(policy.json?["answerPolicy"]?.string == "manual")
                let (app, events) = try await f.app("user-bob")
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
                let answer = try await f.request("POST", f.base + "/answer")
                #expect(answer.status == 200)
                #expect(answer.json?["phase"]?.string == "answered")
                #expect(await phaseOf(app, becomes: .answered))
                try await app.hangUp()
                #expect(await f.waitForPhase(.idle))
                _ = await events.first { $0.ended }
                let mark = events.all.count
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
                let reject = try await f.request("POST", f.base + "/reject")
                #expect(reject.status == 200)
                let ended = await events.first(after: mark) { $0.ended }
                #expect(ended?.outcome == .rejected)
                #expect(ended?.sdkError == .rejected)
                let cancel = try await f.request("POST", f.base + "/cancel")
                #expect(cancel.status == 409)
                let policy2 = try await f.request("PUT", f.base + "/answer-policy",
                                                  .object(["policy": .string("answer"), "afterSeconds": .double(1.5)]))
                #expect(policy2.json?["answerPolicy"]?.string == "answer:1.5")
            }
        }

        @Test("bad requests get 400 with the field named", arguments: [
            ("POST", "/press", #"{"callType":7}"#, "callType", "callType must be 1, 2 or 3"),
            ("POST", "/press", #"{"timeout":-1}"#, "timeout", nil),
            ("POST", "/press", #"{"timeout":"soon"}"#, "timeout", nil),
            ("POST", "/press", #"{"targets":[1]}"#, "targets", nil),
            ("POST", "/press", #"{"target":["a"]}"#, "target", nil),
            ("PUT", "/answer-policy", #"{"policy":"maybe"}"#, "policy", nil),
            ("PUT", "/answer-policy", #"{}"#, "policy", nil),
            ("PUT", "/answer-policy", #"{"policy":"busy","afterSeconds":2}"#, "afterSeconds", nil),
            ("PUT", "/faults", #"{"replyDelayMs":-5}"#, "replyDelayMs", nil),
            ("PUT", "/faults", #"{"actingBusy":"yes"}"#, "actingBusy", nil),
            ("POST", "/faults/drop-connection", #"{"seconds":"x"}"#, "seconds", nil),
            ("POST", "/faults/drop-connection", #"{}"#, "seconds", nil),
            ("GET", "/journal?limit=0", "", "limit", nil),
        ] as [(String, String, String, String, String?)])
        func badRequests(_ method: String, _ path: String, _ body: String, _ field: String, _ message: String?) async throws {
            try await withControl { f in
                let r = try await f.client.request(method, f.base + path, body: body.isEmpty ? nil : Array(body.utf8))
                #expect(r.status == 400, "\(method) \(path) \(body): \(r.text)")
                #expect(r.json?["field"]?.string == field)
                if let message { #expect(r.json?["error"]?.string == message) }
                #expect(await f.phase() == .idle)
            }
        }

        @Test("a body that is not JSON is 400; an unknown path is a JSON 404")
        func notJSON() async throws {
            try await withControl { f in
                let r = try await f.client.request("POST", f.base + "/press", body: Array("{nope".utf8))
                #expect(r.status == 400)
                #expect(r.json?["error"]?.string?.contains("not JSON") == true)
                let unknown = try await f.request("GET", "/api/nothing-here")
                #expect(unknown.status == 404)
                #expect(unknown.json?["error"] != nil)
            }
        }
    }
}

/// Waits until the app's engine is in `phase`.
func phaseOf(_ app: AppUser, becomes phase: CallPhase, within timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await app.phase == phase { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

extension ControlAPI {
    @Suite("Many devices in one process") struct ManyDevices {
        @Test("two devices: both listed, each addressed by devId, metrics per device, the CLI asks for --device")
        func twoDevices() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }) { f in
                var p2 = f.profile
                p2.identity.devId = "ipcemu-doorbell-0002"
                let second = try Device(profile: p2, connection: f.broker.clientOptions(clientID: p2.identity.devId),
                                        log: ControlFixture.quiet)
                try await f.registry.add(second)
                try await second.start()
                #expect(await second.waitUntilConnected())
                let list = try await f.request("GET", "/api/devices")
                #expect(list.json?["devices"]?.array?.compactMap { $0["devId"]?.string } == [f.devId, "ipcemu-doorbell-0002"])
                let press = try await f.request("POST", "/api/devices/ipcemu-doorbell-0002/press",
                                                .object(["targets": .array([.string("someone")])]))
                #expect(press.status == 200)
                #expect(await second.status.phase == .ringingOutgoing)
                #expect(await f.phase() == .idle)
                let metrics = try PrometheusText(try await f.request("GET", "/metrics").text)
                #expect(metrics.value("ipcemu_active_calls", ["device": "ipcemu-doorbell-0002"]) == 1)
                #expect(metrics.value("ipcemu_active_calls", ["device": f.devId]) == 0)
                let cli = try await CLIRun.ipcemu(["press", "--control", f.server.url])
                #expect(cli.status == 1)
                #expect(cli.stderr.contains("several devices (\(f.devId), ipcemu-doorbell-0002): name one with --device"))
                #expect(try await f.request("POST", "/api/devices/ipcemu-doorbell-0002/cancel").status == 200)
                await #expect(throws: ControlError.self) { try await f.registry.add(second) }
                await second.stop()
            }
        }
    }
}
