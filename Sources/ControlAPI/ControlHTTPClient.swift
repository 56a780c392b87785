import Dispatch
import Foundation
import IPCWire

#if canImport(Glibc)
import Glibc
#endif

/// Why a request to the control API did not get an answer.
public enum ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    case badURL(String)
    /// Nothing listens there (or the host is unknown): the message says how to start one.
    case unreachable(url: String, why: String)
    case protocolError(String)

    public var description: String {
        switch self {
        case .badURL(let u): "control URL must look like http://HOST:PORT; got '\(u)'"
        case .unreachable(let url, let why):
            "cannot reach the control API at \(url): \(why) (is `ipcemu run --control HOST:PORT` running?)"
        case .protocolError(let why): "bad HTTP answer from the control API: \(why)"
        }
    }
}

/// One HTTP answer.
public struct ControlHTTPReply: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as JSON (nil if it is not).
    public var json: JSONValue? { try? JSONValue.parse(body) }
}

/// A tiny HTTP/1.1 client for the control API (plain http, one connection per request): what the
/// `ipcemu press|answer|...` commands and the tests use. Blocking socket work runs on GCD threads,
/// never on Swift's cooperative pool.
public struct ControlHTTPClient: Sendable {
    public let baseURL: String
    public let host: String
    public let port: Int
    public let token: String?

    public init(baseURL: String, token: String? = nil) throws(ControlClientError) {
        var rest = Substring(baseURL)
        guard rest.hasPrefix("http://") else { throw .badURL(baseURL) }
        rest = rest.dropFirst("http://".count)
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        var host = "", portText = "80"
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = String(after.dropFirst()) } else if !after.isEmpty { throw .badURL(baseURL) }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            portText = String(rest[rest.index(after: colon)...])
        } else {
            host = String(rest)
        }
        guard !host.isEmpty, !host.contains("/"), let port = Int(portText), (1...65535).contains(port) else { throw .badURL(baseURL) }
        self.baseURL = "http://" + rest
        self.host = host
        self.port = port
        self.token = token
    }

    /// Sends one request and reads the whole answer.
    public func request(_ method: String, _ path: String, json: JSONValue? = nil, body: [UInt8]? = nil,
                        headers: [(String, String)] = [], timeout: Double = 10) async throws(ControlClientError) -> ControlHTTPReply {
        let payload = json.map { $0.serialized() } ?? body
        let head = requestHead(method, path, bodyLength: payload?.count, extra: headers)
        let (host, port, baseURL) = (self.host, self.port, self.baseURL)
        let result: Result<ControlHTTPReply, ControlClientError> = await withCheckedContinuation { c in
            DispatchQueue.global().async {
                c.resume(returning: Self.exchange(host: host, port: port, url: baseURL, request: head + (payload ?? []), timeout: timeout))
            }
        }
        return try result.get()
    }

    func requestHead(_ method: String, _ path: String, bodyLength: Int?, extra: [(String, String)]) -> [UInt8] {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: \(host):\(port)", "Connection: close", "User-Agent: ipcemu"]
        if let token { lines.append("Authorization: Bearer \(token)") }
        if let bodyLength {
            lines.append("Content-Type: application/json")
            lines.append("Content-Length: \(bodyLength)")
        } else if method != "GET" && method != "HEAD" {
            lines.append("Content-Length: 0")
        }
        for (k, v) in extra { lines.append("\(k): \(v)") }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    // MARK: Blocking parts (GCD threads only)

    static func connect(host: String, port: Int, url: String, timeout: Double) -> Result<Int32, ControlClientError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(.unreachable(url: url, why: "unknown host '\(host)'"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd >= 0 {
                var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return .success(fd) }
                lastError = String(cString: strerror(errno))
                Glibc.close(fd)
            }
            ai = a.pointee.ai_next
        }
        return .failure(.unreachable(url: url, why: lastError))
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return send(fd, base + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    static func exchange(host: String, port: Int, url: String, request: [UInt8], timeout: Double) -> Result<ControlHTTPReply, ControlClientError> {
        let fd: Int32
        switch connect(host: host, port: port, url: url, timeout: timeout) {
        case .success(let f): fd = f
        case .failure(let e): return .failure(e)
        }
        defer { Glibc.close(fd) }
        guard sendAll(fd, request) else { return .failure(.unreachable(url: url, why: String(cString: strerror(errno)))) }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.protocolError("read failed: \(String(cString: strerror(errno)))"))
            }
            data.append(contentsOf: buffer[0..<n])
        }
        return parse(data)
    }

    static func parse(_ data: [UInt8]) -> Result<ControlHTTPReply, ControlClientError> {
        guard let end = headerEnd(data) else { return .failure(.protocolError("no complete header in \(data.count) bytes")) }
        let headText = String(decoding: data[0..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return .failure(.protocolError("bad status line")) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(data[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoder = ChunkedDecoder()
            body = decoder.feed(body)
        } else if let length = headers["content-length"].flatMap(Int.init), length <= body.count {
            body = Array(body[0..<length])
        }
        return .success(ControlHTTPReply(status: status, headers: headers, body: body))
    }

    static func headerEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// Incremental decoder of `Transfer-Encoding: chunked`.
struct ChunkedDecoder {
    private var pending: [UInt8] = []
    private var remaining = 0   // bytes of chunk data still to come
    private var skipCRLF = false
    private(set) var done = false

    mutating func feed(_ bytes: [UInt8]) -> [UInt8] {
        pending += bytes
        var out: [UInt8] = []
        var i = 0
        while i < pending.count, !done {
            if remaining > 0 {
                let take = min(remaining, pending.count - i)
                out += pending[i..<(i + take)]
                i += take
                remaining -= take
                if remaining == 0 { skipCRLF = true }
                continue
            }
            if skipCRLF {
                guard pending.count - i >= 2 else { break }
                i += 2
                skipCRLF = false
                continue
            }
            // A size line.
            guard let lf = pending[i...].firstIndex(of: 10) else { break }
            let line = String(decoding: pending[i..<lf], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let sizeText = line.split(separator: ";").first.map(String.init) ?? ""
            i = lf + 1
            guard let size = Int(sizeText, radix: 16) else { done = true; break }
            if size == 0 { done = true; break }
            remaining = size
        }
        pending = Array(pending[min(i, pending.count)...])
        return out
    }
}

/// A server-sent-event stream being read (tests, `ipcemu events`): each `data:` payload as it comes.
public final class ControlEventStream: @unchecked Sendable {
    public let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let lock = NSLock()
    private var fd: Int32 = -1
    private var closed = false

    /// Connects to `path` (e.g. `/api/events`) and starts reading on a GCD thread. The stream has
    /// begun once `waitUntilOpen` returns true.
    public init(client: ControlHTTPClient, path: String = "/api/events") {
        (events, continuation) = AsyncStream.makeStream(of: String.self)
        let head = client.requestHead("GET", path, bodyLength: nil, extra: [("Accept", "text/event-stream")])
        let opened = DispatchSemaphore(value: 0)
        self.openSignal = opened
        DispatchQueue.global().async { [self] in self.read(client: client, head: head) }
    }

    private let openSignal: DispatchSemaphore
    private var open = false

    /// Waits until the response header came (the subscription exists on the server).
    public func waitUntilOpen(timeout: Double = 5) async -> Bool {
        let signal = openSignal
        let ok: Bool = await withCheckedContinuation { c in
            DispatchQueue.global().async { c.resume(returning: signal.wait(timeout: .now() + timeout) == .success) }
        }
        return ok && lock.withLock { open }
    }

    private func read(client: ControlHTTPClient, head: [UInt8]) {
        guard case .success(let fd) = ControlHTTPClient.connect(host: client.host, port: client.port, url: client.baseURL, timeout: 3600),
              ControlHTTPClient.sendAll(fd, head) else {
            openSignal.signal()
            continuation.finish()
            return
        }
        let isClosed = lock.withLock { () -> Bool in
            self.fd = fd
            return closed
        }
        if isClosed { shutdown(fd, Int32(SHUT_RDWR)) }
        var data: [UInt8] = []
        var headerDone = false
        var chunked = false
        var decoder = ChunkedDecoder()
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            var fresh = Array(buffer[0..<n])
            if !headerDone {
                data += fresh
                guard let end = ControlHTTPClient.headerEnd(data) else { continue }
                let head = String(decoding: data[0..<end], as: UTF8.self).lowercased()
                chunked = head.contains("transfer-encoding: chunked")
                headerDone = true
                lock.withLock { open = head.hasPrefix("http/1.1 200") }
                openSignal.signal()
                fresh = Array(data[(end + 4)...])
            }
            text += chunked ? decoder.feed(fresh) : fresh
            while let boundary = Self.eventEnd(text) {
                let block = String(decoding: text[0..<boundary], as: UTF8.self)
                text.removeFirst(boundary + 2)
                for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                    continuation.yield(String(line.dropFirst(6)))
                }
            }
        }
        if !headerDone { openSignal.signal() }
        Glibc.close(fd)
        continuation.finish()
    }

    static func eventEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for i in 0..<(bytes.count - 1) where bytes[i] == 10 && bytes[i + 1] == 10 { return i }
        return nil
    }

    public func close() {
        let fd = lock.withLock { () -> Int32 in
            closed = true
            return self.fd
        }
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit { continuation.finish() }
}
