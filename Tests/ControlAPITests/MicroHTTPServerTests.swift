import ControlAPI
import Foundation
import HTTPServe
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a handler or a stream's producer went through, seen from the test.
private final class Seen: Sendable {
    private let state = Mutex<(started: Int, cancelled: Int)>((0, 0))
    var started: Int { state.withLock { $0.started } }
    var cancelled: Int { state.withLock { $0.cancelled } }
    func start() { state.withLock { $0.started += 1 } }
    func cancel() { state.withLock { $0.cancelled += 1 } }
}

/// Sleeps until cancelled (an hour at most), then records it.
private func holdUntilCancelled(_ seen: Seen) async {
    seen.start()
    try? await Task.sleep(for: .seconds(3600))
    if Task.isCancelled { seen.cancel() }
}

/// An HTTPServe server on a free loopback port, stopped afterwards whatever happens.
private func withHTTPServer(_ edit: (inout HTTPServeConfiguration) -> Void = { _ in }, _ handler: @escaping HTTPServer.Handler,
                            _ body: (HTTPServer) async throws -> Void) async throws {
    var configuration = HTTPServeConfiguration(host: "127.0.0.1", port: 0)
    edit(&configuration)
    let server = try HTTPServer(configuration: configuration, handler: handler)
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

private func ok(_ text: String) -> HTTPServeResponse {
    HTTPServeResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .bytes(Array(text.utf8)))
}

/// Resets the connection (SO_LINGER 0) instead of closing it in order.
private func reset(_ c: RawConnection) {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    c.close()
}

extension ControlAPI {
    @Suite("HTTP server on libmicrohttpd: streams, limits, connection cap, hang-ups") struct MicroHTTPServer {
        @Test("a client that goes away mid-stream cancels the stream's producer at once (no write needed to notice)")
        func streamClientGone() async throws {
            let seen = Seen()
            try await withHTTPServer({ _ in }, { _ in
                HTTPServeResponse(status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream { writer in
                    try await writer.write(Array(": hello\n\n".utf8))
                    await holdUntilCancelled(seen)
                })
            }) { server in
                let port = server.port
                try await Task.detached {
                    let c = try RawConnection(port: port)
                    try c.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    #expect(c.waitFor(": hello", timeout: 5))
                    #expect(c.receivedText.contains("Transfer-Encoding: chunked"), "\(c.receivedText)")
                    c.close()
                }.value
                #expect(await eventually { seen.cancelled == 1 }, "the producer was not cancelled")
                #expect(await eventually { server.openStreams == 0 })
            }
        }

        @Test("a handler whose client resets the connection is cancelled; the server serves on")
        func handlerClientReset() async throws {
            let seen = Seen()
            try await withHTTPServer({ _ in }, { request in
                if request.path == "/slow" { await holdUntilCancelled(seen) }
                return ok("done")
            }) { server in
                let port = server.port
                let c = try RawConnection(port: port)
                try c.send("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(await eventually { seen.started == 1 })
                reset(c)
                #expect(await eventually { seen.cancelled == 1 }, "the handler was not cancelled")
                let reply = try await rawExchange(port: port, "GET /fast HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply)")
                #expect(reply.hasSuffix("done"))
            }
        }

        @Test("a body over the limit reaches the handler as too large; one declared over the read limit is refused unread")
        func bodyLimits() async throws {
            try await withHTTPServer({
                $0.bodyLimit = 1000
                $0.readLimit = 4000
                $0.tooLarge = (413, Array(#"{"error":"too big"}"#.utf8))
            }, { request in
                ok(request.bodyTooLarge ? "too large" : "\(request.body.count) bytes")
            }) { server in
                let port = server.port
                let small = try await rawExchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 1000\r\n\r\n"
                                                  + String(repeating: "a", count: 1000))
                #expect(small.hasSuffix("1000 bytes"), "\(small)")
                let big = try await rawExchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 3000\r\n\r\n"
                                                + String(repeating: "a", count: 3000))
                #expect(big.hasSuffix("too large"), "\(big)")
                let chunked = try await rawExchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                                                    + "7d0\r\n" + String(repeating: "a", count: 2000) + "\r\n0\r\n\r\n")
                #expect(chunked.hasSuffix("too large"), "\(chunked)")
                // Declared far over the read limit, no body sent: refused at once, connection closed.
                let huge = try await rawExchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000000000\r\n\r\n")
                #expect(huge.hasPrefix("HTTP/1.1 413"), "\(huge)")
                #expect(huge.hasSuffix(#"{"error":"too big"}"#))
                // Chunked past the read limit: the connection is closed, nothing answered.
                let endless = try await rawExchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                                    + "1388\r\n" + String(repeating: "a", count: 5000) + "\r\n")
                #expect(!endless.contains("HTTP/1.1 200"), "\(endless)")
            }
        }

        @Test("at most maxConnections are served; the next waits in the backlog and is served when one closes")
        func connectionCap() async throws {
            try await withHTTPServer({ $0.maxConnections = 1; $0.idleTimeout = .seconds(30) }, { _ in ok("hi") }) { server in
                let port = server.port
                try await Task.detached {
                    let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    let first = try RawConnection(port: port)
                    try first.send(request)
                    #expect(first.waitFor("hi", timeout: 5))
                    let second = try RawConnection(port: port)
                    defer { second.close() }
                    try second.send(request)
                    // The first is still served (proof the server got that far), the second not.
                    let before = first.received.count
                    try first.send(request)
                    #expect(first.read(timeout: 5) == .data && first.received.count > before)
                    #expect(second.read(timeout: 0.3) == .timedOut, "\(second.receivedText)")
                    first.close()
                    #expect(second.waitFor("hi", timeout: 5), "the waiting connection was not served after one closed")
                }.value
            }
        }

        @Test("port 0 reports the bound port; [::1] serves over IPv6; a taken port is refused with the reason")
        func addresses() async throws {
            try await withHTTPServer({ $0.host = "::1" }, { request in ok("v6 \(request.target)") }) { server in
                #expect(server.port > 0)
                let reply = try await ControlHTTPClient(baseURL: "http://[::1]:\(server.port)").request("GET", "/a/b?c=d%20e")
                #expect(reply.status == 200)
                #expect(reply.text == "v6 /a/b?c=d%20e")
                #expect(throws: HTTPServeError.self) {
                    _ = try HTTPServer(configuration: HTTPServeConfiguration(host: "::1", port: server.port)) { _ in ok("") }
                }
            }
        }

        @Test("stop() lets an ending stream finish its chunks, then closes every connection")
        func stopEndsStreams() async throws {
            let hub = EventHub()
            let server = try ControlServer(configuration: ControlServerConfiguration(host: "127.0.0.1", port: 0),
                                           registry: DeviceRegistry(hub: hub), log: ControlFixture.quiet)
            try await server.start()
            let port = try #require(server.port)
            let c = try RawConnection(port: port)
            defer { c.close() }
            try c.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            #expect(await eventually { hub.subscriberCount == 1 })
            await server.stop()
            let closed = await Task.detached { c.waitForClose(timeout: 5) }.value
            #expect(closed)
            // The stream ended in order: its last chunk came before the close.
            #expect(c.receivedText.hasSuffix("0\r\n\r\n"), "\(c.receivedText.suffix(40))")
        }
    }
}
