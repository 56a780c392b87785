import ControlAPI
import Foundation
import IPCWire
import Testing
import TestSupport

/// A server on a free loopback port over an empty registry (no broker needed: these tests are
/// about HTTP, not devices).
private func withServer(_ edit: (inout ControlServerConfiguration) -> Void = { _ in }, hub: EventHub = EventHub(),
                        _ body: (ControlServer, Int) async throws -> Void) async throws {
    var configuration = ControlServerConfiguration(host: "127.0.0.1", port: 0)
    edit(&configuration)
    let server = try ControlServer(configuration: configuration, registry: DeviceRegistry(hub: hub), log: ControlFixture.quiet)
    try await server.start()
    let port = try #require(server.port)
    do {
        try await body(server, port)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

private func status(_ reply: String) -> Int? {
    let line = reply.split(separator: "\r\n", maxSplits: 1).first ?? ""
    let parts = line.split(separator: " ")
    return parts.count > 1 ? Int(parts[1]) : nil
}

private func header(_ name: String, in reply: String) -> String? {
    for line in reply.split(separator: "\r\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
    }
    return nil
}

private func jsonBody(_ reply: String) -> JSONValue? {
    guard let r = reply.range(of: "\r\n\r\n") else { return nil }
    return try? JSONValue.parse(Array(reply[r.upperBound...].utf8))
}

extension ControlAPI {
    @Suite("Hardening: cross-site requests, media types, methods, idle and slow clients") struct Hardening {
        @Test("a foreign Origin, or a foreign Host on a loopback server (DNS rebinding), gets 403 naming the header")
        func crossSite() async throws {
            try await withServer { _, port in
                let host = "127.0.0.1:\(port)"
                let same = try await rawExchange(port: port, "GET /api/devices HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nConnection: close\r\n\r\n")
                #expect(status(same) == 200, "\(same)")
                let foreign = try await rawExchange(port: port, "POST /api/devices/x/press HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                #expect(status(foreign) == 403, "\(foreign)")
                #expect(jsonBody(foreign)?["field"] == .string("Origin"))
                let null = try await rawExchange(port: port, "GET /api/devices HTTP/1.1\r\nHost: \(host)\r\nOrigin: null\r\nConnection: close\r\n\r\n")
                #expect(status(null) == 403)
                let rebound = try await rawExchange(port: port, "GET /api/devices HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
                #expect(status(rebound) == 403, "\(rebound)")
                #expect(jsonBody(rebound)?["field"] == .string("Host"))
                for name in ["localhost:\(port)", "[::1]:\(port)", "127.0.0.2"] {
                    let ok = try await rawExchange(port: port, "GET /api/devices HTTP/1.1\r\nHost: \(name)\r\nConnection: close\r\n\r\n")
                    #expect(status(ok) == 200, "Host \(name): \(ok.prefix(80))")
                }
            }
        }

        @Test("a POST or PUT body that is not JSON gets 415; an empty body counts as none")
        func jsonOnly() async throws {
            try await withServer { _, port in
                let host = "Host: 127.0.0.1:\(port)\r\nConnection: close"
                for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
                    let r = try await rawExchange(port: port, "PUT /api/fleet/faults/heartbeats HTTP/1.1\r\n\(host)\r\nContent-Type: \(type)\r\nContent-Length: 24\r\n\r\n{\"suppressFraction\":0.5}")
                    #expect(status(r) == 415, "\(type): \(r)")
                    #expect(jsonBody(r)?["field"] == .string("Content-Type"))
                }
                let untyped = try await rawExchange(port: port, "PUT /api/fleet/faults/heartbeats HTTP/1.1\r\n\(host)\r\nContent-Length: 24\r\n\r\n{\"suppressFraction\":0.5}")
                #expect(status(untyped) == 415)
                // JSON passes the guard and reaches the operation (no fleet here: 404 from the handler).
                let json = try await rawExchange(port: port, "PUT /api/fleet/faults/heartbeats HTTP/1.1\r\n\(host)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 24\r\n\r\n{\"suppressFraction\":0.5}")
                #expect(status(json) == 404, "\(json)")
                let empty = try await rawExchange(port: port, "POST /api/phone/video/close HTTP/1.1\r\n\(host)\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n")
                #expect(status(empty) == 404, "\(empty)")   // past the guard: no console phone in this server
                let blank = try await rawExchange(port: port, "POST /api/phone/video/close HTTP/1.1\r\n\(host)\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n  ")
                #expect(status(blank) == 415, "\(blank)")
                let big = String(repeating: " ", count: 300_000)
                let tooBig = try await rawExchange(port: port, "POST /api/phone/video HTTP/1.1\r\n\(host)\r\nContent-Type: application/json\r\nContent-Length: \(big.utf8.count + 2)\r\n\r\n{\(big)}")
                #expect(status(tooBig) == 413, "\(tooBig.prefix(200))")
            }
        }

        @Test("a method the path does not list gets 405 with Allow; an unknown path 404, as JSON")
        func methods() async throws {
            try await withServer { _, port in
                let host = "Host: 127.0.0.1:\(port)\r\nConnection: close"
                let delete = try await rawExchange(port: port, "DELETE /api/devices/some-device HTTP/1.1\r\n\(host)\r\n\r\n")
                #expect(status(delete) == 405, "\(delete)")
                #expect(header("Allow", in: delete) == "GET")
                #expect(jsonBody(delete)?["error"]?.string?.contains("DELETE") == true)
                let faults = try await rawExchange(port: port, "POST /api/devices/d/faults HTTP/1.1\r\n\(host)\r\nContent-Length: 0\r\n\r\n")
                #expect(status(faults) == 405)
                #expect(header("Allow", in: faults) == "GET, PUT")
                let getPress = try await rawExchange(port: port, "GET /api/devices/d/press HTTP/1.1\r\n\(host)\r\n\r\n")
                #expect(header("Allow", in: getPress) == "POST")
                let unknown = try await rawExchange(port: port, "GET /api/nothing-here HTTP/1.1\r\n\(host)\r\n\r\n")
                #expect(status(unknown) == 404)
                #expect(jsonBody(unknown)?["error"]?.string?.contains("no such endpoint") == true)
            }
        }

        @Test("a connection that sends nothing is closed after the idle timeout; one streaming events is not")
        func idleTimeout() async throws {
            try await withServer({ $0.idleTimeout = .milliseconds(300) }) { _, port in
                try await Task.detached {
                    let silent = try RawConnection(port: port)
                    defer { silent.close() }
                    let streaming = try RawConnection(port: port)
                    defer { streaming.close() }
                    try streaming.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                    #expect(streaming.waitFor(": ipcemu events", timeout: 5))
                    #expect(silent.waitForClose(timeout: 5), "the idle connection stayed open")
                    // The stream outlived the idle timeout: it is still open, and still answers.
                    #expect(streaming.read(timeout: 0.5) == .timedOut)
                }.value
            }
        }

        @Test("connections beyond the cap wait until one closes")
        func connectionCap() async throws {
            try await withServer({ $0.maxConnections = 2; $0.idleTimeout = .seconds(30) }) { _, port in
                try await Task.detached {
                    let request = "GET /api/devices HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
                    let first = try RawConnection(port: port)
                    let second = try RawConnection(port: port)
                    defer { second.close() }
                    try first.send(request)
                    #expect(first.waitFor("\"devices\"", timeout: 5))
                    try second.send(request)
                    #expect(second.waitFor("\"devices\"", timeout: 5))
                    // The third connects (the kernel's backlog) but is not served ...
                    let third = try RawConnection(port: port)
                    defer { third.close() }
                    try third.send(request)
                    // ... while the two accepted ones still are (proof the server got that far).
                    let before = second.received.count
                    try second.send(request)
                    #expect(second.read(timeout: 5) == .data && second.received.count > before)
                    #expect(third.received.isEmpty)
                    #expect(third.read(timeout: 0.2) == .timedOut)
                    first.close()
                    #expect(third.waitFor("\"devices\"", timeout: 5), "the waiting connection was not served after one closed")
                }.value
            }
        }

        @Test("a reader that stops reading the event stream is cut off; the hub's memory stays bounded")
        func slowReader() async throws {
            let hub = EventHub(bufferLimit: 16)
            try await withServer(hub: hub) { _, port in
                let reader = try RawConnection(port: port, receiveBuffer: 4096)
                defer { reader.close() }
                try reader.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                #expect(await eventually { hub.subscriberCount == 1 })
                // Big events, never read: the socket buffers fill, the writer blocks, the hub's
                // buffer of 16 fills, and the subscriber is dropped.
                let padding = String(repeating: "x", count: 16_384)
                var sent = 0
                let deadline = ContinuousClock.now + .seconds(20)
                while hub.subscribersCutOff == 0, ContinuousClock.now < deadline {
                    hub.publish(JSONValue.object(["type": .string("test"), "n": .int(Int64(sent)), "pad": .string(padding)]), device: nil)
                    sent += 1
                    try await Task.sleep(for: .milliseconds(1))
                }
                #expect(hub.subscribersCutOff == 1, "not cut off after \(sent) events")
                #expect(hub.droppedEvents >= 1)
                #expect(await eventually { hub.subscriberCount == 0 })
                // Nothing more is queued for it: publishing on costs nothing.
                let dropped = hub.droppedEvents
                hub.publish(JSONValue.object(["type": .string("after")]), device: nil)
                #expect(hub.droppedEvents == dropped)
            }
        }

        @Test("the hub's bounded buffer: a subscriber that reads nothing gets its first items, then its stream ends")
        func hubBuffer() async throws {
            let hub = EventHub(bufferLimit: 4)
            let subscription = hub.subscription()
            for i in 0..<10 { hub.publish(i, device: nil) }
            #expect(hub.subscribersCutOff == 1)
            #expect(hub.droppedEvents == 1)   // the fifth; the rest found no subscriber
            #expect(hub.subscriberCount == 0)
            var got: [EventHub.Item] = []
            for await item in subscription.items { got.append(item) }
            #expect(got == (0..<4).map { .event(Array("\($0)".utf8)) })
        }
    }
}
