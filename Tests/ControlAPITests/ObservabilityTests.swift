import AppSimulator
import CallEngine
import ControlAPI
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    @Suite("Events, journal, metrics") struct Observability {
        @Test("server-sent events carry every call event; an unknown device filter is 404")
        func serverSentEvents() async throws {
            try await withControl { f in
                let stream = ControlEventStream(client: f.client, path: "/api/events?device=\(f.devId)")
                defer { stream.close() }
                #expect(await stream.waitUntilOpen())
                let seen = Recorder(stream.events)
                let (_, alice) = try await f.app("user-alice")
                let press = try await f.request("POST", f.base + "/press", .object(["targets": .array([.string("user-alice")])]))
                let session = try #require(press.json?["sessionId"]?.string)
                _ = await alice.first { $0.incoming }
                let cancel = try await f.request("POST", f.base + "/cancel")
                #expect(cancel.status == 200)
                func has(_ type: String, _ event: String?) async -> Bool {
                    await seen.first { line -> Bool? in
                        guard let v = try? JSONValue.parse(Array(line.utf8)), v["type"]?.string == type,
                              v["device"]?.string == f.devId else { return nil }
                        if let event { return v["message"]?["event"]?.string == event && v["session"]?.string == session ? true : nil }
                        return v["record"]?["outcome"]?.string == "cancelled" ? true : nil
                    } ?? false
                }
                #expect(await has("sent", "call"))
                #expect(await has("received", "ring"))
                #expect(await has("sent", "cancel"))
                #expect(await has("callEnded", nil))
                // Every payload is what the served document says (components/schemas/DeviceEvent).
                let doc = try openAPIJSON(try await f.request("GET", "/openapi.yaml").text)
                guard case .object(let schemas)? = doc["components"]?["schemas"] else { Issue.record("no schemas"); return }
                let checker = SchemaChecker(schemas: schemas)
                let lines = seen.all
                #expect(lines.count >= 4)
                for line in lines {
                    let value = try JSONValue.parse(Array(line.utf8))
                    let problems = checker.check(value, against: .object(["$ref": .string("#/components/schemas/DeviceEvent")]))
                    #expect(problems.isEmpty, "\(line): \(problems)")
                }
                let bad = try await f.request("GET", "/api/events?device=nope")
                #expect(bad.status == 404)
                #expect(bad.json?["field"]?.string == "device")
            }
        }

        @Test("journal: the API and the JSON Lines file list every event in and out and the ended call")
        func journal() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { f in
                let (app, events) = try await f.app("user-alice")
                let session = try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await phaseOf(app, becomes: .answered))
                try await app.hangUp()
                _ = await events.first { $0.ended }
                #expect(await f.waitForPhase(.idle))
                let reply = try await f.request("GET", f.base + "/journal?limit=50")
                #expect(reply.status == 200)
                let entries = reply.json?["entries"]?.array ?? []
                let summary = entries.map { "\($0["kind"]?.string ?? "")/\($0["direction"]?.string ?? "")/\($0["event"]?.string ?? $0["outcome"]?.string ?? "")" }
                #expect(summary == ["event/in/call", "event/out/ring", "event/out/answer", "event/in/hang_up", "call/incoming/hungUp"])
                #expect(entries.allSatisfy { $0["session"]?.string == session && $0["device"]?.string == f.devId })
                #expect(entries.first?["peer"]?.string == "user-alice")
                let file = try #require(reply.json?["file"]?.string)
                let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.last == "")
                // The file keeps `null` fields; the API leaves them out (docs/control.md).
                let parsed = try lines.dropLast().map { line -> JSONValue in
                    guard case .object(let o) = try JSONValue.parse(Array(line.utf8)) else { return .null }
                    return .object(o.filter { $0.value != .null })
                }
                #expect(parsed == entries)
            }
        }

        @Test("a journal whose file ends in a partial line continues on a new line and keeps the old bytes")
        func journalAfterTornLine() async throws {
            let dir = try TemporaryDirectory(prefix: "ipcemu-journal")
            let path = dir.file(CallJournal.fileName(devId: "dev-1"))
            let before = #"{"kind":"event","n":1}"# + "\n" + #"{"kind":"ev"#
            try before.write(toFile: path, atomically: false, encoding: .utf8)
            let journal = try CallJournal(devId: "dev-1", directory: dir.path)
            await journal.record(direction: .in, message: CallMessage(event: .call, curId: "u", targetId: "dev-1", sessionId: "s1"))
            await journal.closeFile()
            let after = try String(contentsOfFile: path, encoding: .utf8)
            #expect(after.hasPrefix(before + "\n"))
            let lines = after.split(separator: "\n")
            #expect(lines.count == 3)
            let last = try JSONValue.parse(Array(lines[2].utf8))
            #expect(last["event"]?.string == "call")
            #expect(last["session"]?.string == "s1")
            #expect(after.hasSuffix("\n"))
        }

        @Test("/metrics parses strictly; it counts calls by outcome, ring latency, active calls, reconnects")
        func metrics() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }) { f in
                let (app, events) = try await f.app("user-alice")
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
                let during = try PrometheusText(try await f.request("GET", "/metrics").text)
                let d = ["device": f.devId]
                #expect(during.value("ipcemu_active_calls", d) == 1)
                _ = try await f.request("POST", f.base + "/answer")
                #expect(await phaseOf(app, becomes: .answered))
                try await app.hangUp()
                _ = await events.first { $0.ended }
                #expect(await f.waitForPhase(.idle))
                let reply = try await f.request("GET", "/metrics")
                #expect(reply.headers["content-type"]?.hasPrefix("text/plain;") == true)
                #expect(reply.headers["content-type"]?.contains("version=0.0.4") == true)
                let m = try PrometheusText(reply.text)
                #expect(m.types["ipcemu_calls_total"] == "counter")
                #expect(m.types["ipcemu_call_ring_latency_seconds"] == "histogram")
                #expect(m.types["ipcemu_active_calls"] == "gauge")
                #expect(m.value("ipcemu_calls_total", ["device": f.devId, "outcome": "hungUp"]) == 1)
                #expect(m.value("ipcemu_calls_total", ["device": f.devId, "outcome": "rejected"]) == 0)
                #expect(m.value("ipcemu_call_ring_latency_seconds_count", d) == 1)
                let sum = try #require(m.value("ipcemu_call_ring_latency_seconds_sum", d))
                #expect(sum >= 0 && sum < 1)
                #expect(m.value("ipcemu_active_calls", d) == 0)
                #expect(m.value("ipcemu_media_frames_sent_total", d) == 0)
                #expect(m.value("ipcemu_media_frames_received_total", d) == 0)
                #expect(m.value("ipcemu_media_fps", d) == 0)
                #expect(m.value("ipcemu_p2p_link_up", d) == 0)
                #expect(m.value("ipcemu_mqtt_reconnects_total", d) == 0)
                #expect(m.value("ipcemu_mqtt_connected", d) == 1)
            }
        }

        @Test("the strict parser refuses broken expositions")
        func parserIsStrict() {
            #expect(throws: PrometheusText.ParseError.self) { try PrometheusText("x 1\n") }
            #expect(throws: PrometheusText.ParseError.self) { try PrometheusText("# TYPE x gauge\nx{a=\"1} 1\n") }
            #expect(throws: PrometheusText.ParseError.self) { try PrometheusText("# TYPE x gauge\nx one\n") }
            #expect(throws: PrometheusText.ParseError.self) {
                try PrometheusText("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
            }
            #expect(throws: Never.self) { try PrometheusText("# TYPE x gauge\nx{a=\"q\\\"\"} 1.5\n") }
        }
    }
}

extension ControlAPI.Observability {
    @Test("stopping the server ends open event streams and returns promptly")
    func stopWithOpenStream() async throws {
        let f = try await ControlFixture()
        let stream = ControlEventStream(client: f.client, path: "/api/events")
        #expect(await stream.waitUntilOpen())
        let start = ContinuousClock.now
        await f.server.stop()
        #expect(ContinuousClock.now - start < .seconds(5))
        let ended = await eventually(timeout: .seconds(5)) { f.registry.hub.subscriberCount == 0 }
        #expect(ended)
        stream.close()
        await f.close()
    }

    @Test("ipcemu events prints the stream, one JSON object a line")
    func eventsCommand() async throws {
        try await withControl { f in
            let child = try IPCEmuProcess(["events", "--control", f.server.url, "--device", f.devId])
            #expect(await eventually { f.registry.hub.subscriberCount == 1 })
            _ = try await f.request("POST", f.base + "/press", .object(["targets": .array([.string("nobody")])]))
            #expect(await child.waitFor(#""type":"sent""#))
            let first = child.stdout.split(separator: "\n").first.map(String.init) ?? ""
            #expect((try? JSONValue.parse(Array(first.utf8)))?["device"]?.string == f.devId)
            child.signal(SIGTERM)
            _ = await child.waitForExit(timeout: .seconds(5))
        }
    }
}

extension ControlAPI.Observability {
    @Test("the console phone's events on the stream are what the served document says (PhoneEvent)")
    func phoneEvents() async throws {
        try await withControl(edit: { $0.behaviour.answerPolicy = .manual }, phone: true) { f in
            let phone = try #require(f.phone)
            let stream = ControlEventStream(client: f.client, path: "/api/events")
            defer { stream.close() }
            #expect(await stream.waitUntilOpen())
            let seen = Recorder(stream.events)
            _ = try await f.request("POST", f.base + "/press", .object(["targets": .array([.string(phone.userId)])]))
            let line = await seen.first { line -> String? in
                guard let v = try? JSONValue.parse(Array(line.utf8)), v["type"]?.string == "phone",
                      v["what"]?.string == "incomingCall" else { return nil }
                return line
            }
            let text = try #require(line)
            let value = try JSONValue.parse(Array(text.utf8))
            #expect(value["user"]?.string == phone.userId)
            #expect(value["device"]?.string == f.devId)
            #expect(value["phone"]?["phase"]?.string == "ringingIncoming")
            let doc = try openAPIJSON(try await f.request("GET", "/openapi.yaml").text)
            guard case .object(let schemas)? = doc["components"]?["schemas"] else { Issue.record("no schemas"); return }
            let problems = SchemaChecker(schemas: schemas)
                .check(value, against: .object(["$ref": .string("#/components/schemas/PhoneEvent")]))
            #expect(problems.isEmpty, "\(problems)")
        }
    }
}
