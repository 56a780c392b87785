import AppSimulator
import CallEngine
import ControlAPI
import Foundation
import IPCWire
import Testing
import TestSupport
import Yams

/// A small validator for the subset of OpenAPI 3.0 schemas the document uses: type, nullable,
/// properties/required/additionalProperties, items, enum, $ref.
struct SchemaChecker {
    let schemas: [String: JSONValue]

    func check(_ value: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        var schema = schema
        if let ref = schema["$ref"]?.string {
            let name = String(ref.split(separator: "/").last ?? "")
            guard let resolved = schemas[name] else { return ["\(path): unresolved \(ref)"] }
            schema = resolved
        }
        if value == .null {
            return schema["nullable"]?.bool == true ? [] : ["\(path): null but not nullable"]
        }
        if let all = schema["allOf"]?.array {
            return all.flatMap { check(value, against: $0, at: path) }
        }
        var problems: [String] = []
        if let allowed = schema["enum"]?.array, !allowed.contains(value) {
            problems.append("\(path): \(value.jsonString) not in enum")
        }
        switch (schema["type"]?.string, value) {
        case (nil, _): break
        case ("string", .string), ("boolean", .bool), ("integer", .int), ("number", .int), ("number", .double): break
        case ("array", .array(let items)):
            if let itemSchema = schema["items"] {
                for (i, item) in items.enumerated() { problems += check(item, against: itemSchema, at: "\(path)[\(i)]") }
            }
        case ("object", .object(let fields)):
            let props: [String: JSONValue]
            if case .object(let p)? = schema["properties"] { props = p } else { props = [:] }
            for key in schema["required"]?.array?.compactMap(\.string) ?? [] where fields[key] == nil {
                problems.append("\(path): missing required \(key)")
            }
            for (key, v) in fields {
                if let s = props[key] { problems += check(v, against: s, at: "\(path).\(key)") }
                else if schema["additionalProperties"]?.bool == false { problems.append("\(path): undocumented field \(key)") }
            }
        default:
            problems.append("\(path): \(value.jsonString.prefix(60)) is not \(schema["type"]?.string ?? "?")")
        }
        return problems
    }
}

extension ControlAPI {
    @Suite("OpenAPI document vs the live server") struct OpenAPI {
        @Test("every route the server has is documented, and every documented operation is a route")
        func routesMatch() async throws {
            try await withControl { f in
                let reply = try await f.request("GET", "/openapi.yaml")
                #expect(reply.status == 200)
                #expect(reply.text == ControlServer.openAPIDocument)
                let doc = try openAPIJSON(reply.text)
                #expect(doc["openapi"]?.string?.hasPrefix("3.") == true)
                guard case .object(let paths)? = doc["paths"] else { Issue.record("no paths"); return }
                var documented = Set<String>()
                for (path, item) in paths {
                    guard case .object(let ops) = item else { continue }
                    for method in ops.keys { documented.insert("\(method.uppercased()) \(path)") }
                }
                let served = Set(f.server.routes.map(\.description))
                #expect(served.subtracting(documented).isEmpty, "undocumented: \(served.subtracting(documented).sorted())")
                #expect(documented.subtracting(served).isEmpty, "not served: \(documented.subtracting(served).sorted())")
                #expect(served.count == f.server.routes.count)
            }
        }

        @Test("every documented operation answers with a documented status and JSON shape")
        func liveSweep() async throws {
            try await withControl(edit: { $0.behaviour.answerPolicy = .manual }, phone: true) { f in
                let doc = try openAPIJSON(try await f.request("GET", "/openapi.yaml").text)
                guard case .object(let schemas)? = doc["components"]?["schemas"] else { Issue.record("no schemas"); return }
                let checker = SchemaChecker(schemas: schemas)
                var exercised = Set<String>()
                let b = "/api/devices/{devId}"

                func call(_ method: String, _ template: String, _ body: JSONValue? = nil, query: String = "",
                          devId: String? = nil, name: String = "", expect status: Int) async throws {
                    let path = template.replacingOccurrences(of: "{devId}", with: devId ?? f.devId)
                        .replacingOccurrences(of: "{name}", with: name)
                    let reply = try await f.request(method, path + query, body)
                    #expect(reply.status == status, "\(method) \(path): \(reply.status) \(reply.text.prefix(200))")
                    guard let op = doc["paths"]?[template]?[method.lowercased()] else {
                        Issue.record("\(method) \(template) not documented")
                        return
                    }
                    guard let response = op["responses"]?[String(reply.status)] else {
                        Issue.record("\(method) \(template): \(reply.status) not documented")
                        return
                    }
                    exercised.insert("\(method) \(template)")
                    guard case .object(let content)? = response["content"], let (type, media) = content.first else { return }
                    #expect(reply.headers["content-type"]?.hasPrefix(type) == true, "\(method) \(template): content-type")
                    if type == "application/json", let schema = media["schema"] {
                        let json = try #require(reply.json, "\(method) \(template): not JSON")
                        let problems = checker.check(json, against: schema)
                        #expect(problems.isEmpty, "\(method) \(template) \(reply.status): \(problems)")
                    }
                }

                try await call("GET", "/", expect: 200)
                try await call("GET", "/openapi.yaml", expect: 200)
                try await call("GET", "/metrics", expect: 200)
                try await call("GET", "/api/devices", expect: 200)
                try await call("GET", "/api/devices", query: "?offset=0&limit=5&prefix=ipcemu&phase=idle", expect: 200)
                try await call("GET", "/api/devices", query: "?limit=0", expect: 400)
                // Fleet routes answer 404 in a process that runs no fleet (FleetTests cover a fleet).
                try await call("GET", "/api/fleet", expect: 404)
                try await call("POST", "/api/fleet/faults/drop-connection", .object(["seconds": .int(1)]), expect: 404)
                try await call("PUT", "/api/fleet/faults/heartbeats", .object(["suppressFraction": .double(0.5)]), expect: 404)
                try await call("POST", "/api/fleet/faults/wake", .object(["count": .int(1)]), expect: 404)
                try await call("GET", b, expect: 200)
                try await call("GET", b, devId: "nope", expect: 404)
                try await call("POST", b + "/answer", expect: 409)
                try await call("POST", b + "/reject", expect: 409)
                try await call("POST", b + "/hangup", expect: 409)
                try await call("POST", b + "/cancel", expect: 409)
                try await call("POST", b + "/press", .object(["callType": .int(9)]), expect: 400)
                // The phone (user-alice) rings; cancel it, then press again and let the phone answer.
                try await call("POST", b + "/press", .object(["targets": .array([.string("user-alice")])]), expect: 200)
                try await call("POST", b + "/press", expect: 409)
                // The phone's call and the device's cancel travel over MQTT: wait for both, so the
                // phone answer below meets a phone that is not ringing (a race under load).
                if let phone = f.phone { #expect(await phoneRings(phone)) }
                try await call("POST", b + "/cancel", expect: 200)
                if let phone = f.phone { #expect(await phoneStopsRinging(phone)) }
                try await call("POST", "/api/phone/answer", expect: 409)
                try await call("POST", "/api/phone/video", .object(["sdp": .string("v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n")]), expect: 409)
                try await call("POST", "/api/phone/video/close", expect: 200)
                try await call("POST", "/api/phone/video/resolution", .object(["stream": .string("sub")]), expect: 409)
                try await call("POST", "/api/phone/video/resolution", .object(["stream": .string("hd")]), expect: 400)
                try await call("POST", b + "/press", .object(["targets": .array([.string("user-alice")]), "timeout": .int(20)]), expect: 200)
                let phone = try #require(f.phone)
                #expect(await phoneRings(phone))
                try await call("GET", "/api/phone", expect: 200)
                try await call("POST", "/api/phone/answer", expect: 200)
                #expect(await f.waitForPhase(.answered))
                try await call("GET", b, expect: 200)   // a state with a session
                try await call("POST", "/api/phone/video", .object([:]), expect: 400)
                try await call("POST", "/api/phone/video", .object(["sdp": .int(1)]), expect: 400)
                try await call("POST", "/api/phone/hangup", expect: 200)
                #expect(await f.waitForPhase(.idle))
                try await call("GET", "/api/phone", expect: 200)   // with lastCall
                try await call("POST", "/api/phone/reject", expect: 409)
                // An incoming call rejected, then one answered and hung up, by the operator.
                let (app, _) = try await f.app("user-bob")
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
                try await call("POST", b + "/reject", expect: 200)
                #expect(await phaseOf(app, becomes: .idle))
                try await app.startCall(devId: f.devId, timeoutSeconds: 10)
                #expect(await f.waitForPhase(.ringingIncoming))
                try await call("POST", b + "/answer", expect: 200)
                try await call("POST", b + "/hangup", expect: 200)
                try await call("PUT", b + "/answer-policy", .object(["policy": .string("busy")]), expect: 200)
                try await call("PUT", b + "/answer-policy", .object(["policy": .string("x")]), expect: 400)
                try await call("GET", b + "/faults", expect: 200)
                try await call("PUT", b + "/faults", .object(["replyDelayMs": .int(0), "actingBusy": .bool(false)]), expect: 200)
                try await call("PUT", b + "/faults", .object(["replyDelayMs": .string("x")]), expect: 400)
                try await call("POST", b + "/faults/drop-connection", .object(["seconds": .int(0)]), expect: 202)
                try await call("POST", b + "/faults/drop-connection", .object([:]), expect: 400)
                try await call("POST", b + "/faults/drop-p2p", expect: 202)
                try await call("GET", b + "/journal", expect: 200)
                try await call("GET", b + "/journal", query: "?limit=x", expect: 400)
                // PROTOCOL.md 8.5: the device's media (MediaRouteTests serve the files themselves).
                try await call("GET", b + "/media", expect: 200)
                try await call("GET", b + "/media/{name}", name: "press-none.jpg", expect: 404)
                try await call("GET", b + "/media/{name}", name: ".hidden.jpg", expect: 400)
                // PROTOCOL.md 8 (DoorbellRouteTests cover a doorbell kind): this screen_ipc device has no DPs.
                try await call("GET", b + "/dps", expect: 200)
                try await call("PUT", b + "/dps", .object(["dps": .object(["149": .bool(true)])]), expect: 404)
                try await call("PUT", b + "/dps", .object(["dps": .object(["212": .string("")])]), expect: 400)
                try await call("POST", b + "/motion", expect: 200)
                try await call("POST", b + "/wake", expect: 202)
                try await call("POST", b + "/battery", .object(["percent": .int(50)]), expect: 200)
                try await call("POST", b + "/battery", .object(["percent": .int(-1)]), expect: 400)
                try await call("GET", b + "/faults/push", expect: 409)
                try await call("PUT", b + "/faults/push", .object(["lossShare": .double(0.5)]), expect: 409)
                try await call("GET", "/api/events", query: "?device=nope", expect: 404)
                // Not on a cloud (no --cloud): the cloud join's state is not there (CloudConsoleTests covers 200).
                try await call("GET", "/api/cloud", expect: 404)
                // The event stream: its header and content type (reading it is covered elsewhere).
                let stream = ControlEventStream(client: f.client, path: "/api/events")
                #expect(await stream.waitUntilOpen())
                stream.close()
                exercised.insert("GET /api/events")

                var documented = Set<String>()
                if case .object(let paths)? = doc["paths"] {
                    for (path, item) in paths { if case .object(let ops) = item { for m in ops.keys { documented.insert("\(m.uppercased()) \(path)") } } }
                }
                #expect(documented.subtracting(exercised).isEmpty, "not exercised: \(documented.subtracting(exercised).sorted())")
            }
        }
    }
}

/// The served YAML document as JSON (the checker reads JSON).
func openAPIJSON(_ yaml: String) throws -> JSONValue {
    let object = try #require(try Yams.load(yaml: yaml))
    return try JSONValue.parse(Array(try JSONSerialization.data(withJSONObject: object)))
}

func phoneRings(_ phone: ConsolePhone, within timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await phone.state().phase.rawValue == "ringingIncoming" { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

func phoneStopsRinging(_ phone: ConsolePhone, within timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await phone.state().phase.rawValue != "ringingIncoming" { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}
