import CHTTPServe
import Foundation
import Synchronization

/// What the C server calls on a connection's thread: runs the handler as a task, waits for its
/// answer and hands it to libmicrohttpd.
final class ServerCore: Sendable {
    let handler: HTTPServer.Handler
    let log: @Sendable (String) -> Void
    let serverName: String?
    let streams = StreamSet()
    private let isStopping = Atomic<Bool>(false)

    init(handler: @escaping HTTPServer.Handler, log: @escaping @Sendable (String) -> Void, serverName: String?) {
        self.handler = handler
        self.log = log
        self.serverName = serverName
    }

    /// How long a handler still runs after its client hung up (or the server stopped) and its task was
    /// cancelled, before its connection's thread stops waiting for it.
    static let afterHangUp = 2000

    func stopping() { isStopping.store(true, ordering: .relaxed) }

    /// One request, on its connection's thread.
    func serve(_ raw: OpaquePointer) {
        let request = Self.request(raw)
        let socket = chs_request_socket(raw)
        guard let exchange = Exchange() else {
            respond(raw, Self.unavailable("no file descriptor for the request"), socket: socket)
            return
        }
        let handler = self.handler
        let task = Task {
            let response = await handler(request)
            exchange.finish(response)
        }
        guard let response = exchange.wait(socket: socket, onHangUp: { task.cancel() }) else { return }
        respond(raw, response, socket: socket)
    }

    private func respond(_ raw: OpaquePointer, _ response: HTTPServeResponse, socket: Int32) {
        var headers = response.headers.filter { h in
            let name = h.name.lowercased()
            return name != "content-length" && name != "transfer-encoding" && name != "connection"
        }
        if let serverName { headers.append(("Server", serverName)) }
        let status = UInt32((100...599).contains(response.status) ? response.status : 500)
        withCStrings(headers.map(\.name)) { names in
            withCStrings(headers.map(\.value)) { values in
                switch response.body {
                case .bytes(let bytes):
                    _ = bytes.withUnsafeBufferPointer { body in
                        chs_respond_bytes(raw, status, names.baseAddress, values.baseAddress, headers.count, body.baseAddress, body.count)
                    }
                case .stream(let produce):
                    guard !isStopping.load(ordering: .relaxed), let pipe = StreamPipe(socket: socket, streams: streams) else {
                        let refusal = Self.unavailable("the server is stopping or out of file descriptors")
                        guard case .bytes(let body) = refusal.body else { return }
                        _ = body.withUnsafeBufferPointer { b in
                            chs_respond_bytes(raw, UInt32(refusal.status), nil, nil, 0, b.baseAddress, b.count)
                        }
                        return
                    }
                    streams.add(pipe)
                    pipe.start(produce)
                    // The C side owns one reference from here: stream_free releases it.
                    let opaque = Unmanaged.passRetained(pipe).toOpaque()
                    _ = chs_respond_stream(raw, status, names.baseAddress, values.baseAddress, headers.count, opaque)
                }
            }
        }
    }

    private static func request(_ raw: OpaquePointer) -> HTTPServeRequest {
        var headers: [(name: String, value: String)] = []
        let count = chs_request_header_count(raw)
        headers.reserveCapacity(count)
        for i in 0..<count {
            headers.append((String(cString: chs_request_header_name(raw, i)), String(cString: chs_request_header_value(raw, i))))
        }
        let length = chs_request_body_length(raw)
        let body = chs_request_body(raw).map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
        return HTTPServeRequest(method: String(cString: chs_request_method(raw)), target: String(cString: chs_request_target(raw)),
                                version: String(cString: chs_request_version(raw)), headers: headers, body: body,
                                bodyTooLarge: chs_request_body_too_large(raw) != 0)
    }

    static func unavailable(_ why: String) -> HTTPServeResponse {
        HTTPServeResponse(status: 503, headers: [("Content-Type", "text/plain")], body: .bytes(Array("\(why)\n".utf8)))
    }

    /// Runs `body` with NUL-terminated copies of `strings` (freed afterwards).
    private func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return copies.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
    }
}

/// A handler's answer, handed from its task to the connection's thread that waits for it.
final class Exchange: Sendable {
    private let answer = Mutex<HTTPServeResponse?>(nil)
    private let signal: Int32

    init?() {
        let signal = chs_signal_open()
        guard signal >= 0 else { return nil }
        self.signal = signal
    }

    deinit { chs_signal_close(signal) }

    func finish(_ response: HTTPServeResponse) {
        answer.withLock { $0 = response }
        chs_signal_raise(signal)
    }

    /// Blocks until the answer is there. When the socket hangs up (the client reset it, or the server
    /// is stopping) `onHangUp` runs once and the wait goes on for `ServerCore.afterHangUp` ms at most;
    /// nil if no answer came.
    func wait(socket: Int32, onHangUp: () -> Void) -> HTTPServeResponse? {
        var hungUpAt: ContinuousClock.Instant?
        while true {
            if let response = answer.withLock({ a -> HTTPServeResponse? in
                defer { a = nil }
                return a
            }) { return response }
            var timeout: Int32 = -1
            if let hungUpAt {
                let left = ServerCore.afterHangUp - Self.milliseconds(ContinuousClock.now - hungUpAt)
                guard left > 0 else { return nil }
                timeout = Int32(clamping: left)
            }
            // Only a hang-up counts here, not the peer closing its side: a client may send its
            // request, shut down its writing side and still read the answer.
            let woke = chs_signal_wait(signal, hungUpAt == nil ? socket : -1, 0, timeout)
            if woke & Int32(CHS_WAIT_HUNG_UP) != 0, hungUpAt == nil {
                hungUpAt = .now
                onHangUp()
            }
        }
    }

    private static func milliseconds(_ d: Duration) -> Int {
        let (s, a) = d.components
        return Int(clamping: s) &* 1000 &+ Int(a / 1_000_000_000_000_000)
    }
}
