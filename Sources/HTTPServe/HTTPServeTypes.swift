/// Where an `HTTPServer` listens and what it takes.
public struct HTTPServeConfiguration: Sendable {
    public var host: String
    /// 0: any free port (`HTTPServer.port` tells which).
    public var port: Int
    /// Connections served at once; more wait in the listen backlog until one closes.
    public var maxConnections: Int
    /// A connection with nothing sent or received for this long is closed (libmicrohttpd counts
    /// whole seconds: rounded up); zero: never.
    public var idleTimeout: Duration
    /// A body longer than this is read and dropped: the handler sees `bodyTooLarge`.
    public var bodyLimit: Int
    /// A declared body (Content-Length) longer than this is not read: `tooLarge` answers at once and
    /// the connection closes; a chunked one that grows past it closes the connection.
    public var readLimit: Int
    /// The answer to a body over `readLimit` (sent as `application/json`).
    public var tooLarge: (status: Int, body: [UInt8])
    /// Added to every response.
    public var serverName: String?

    public init(host: String, port: Int, maxConnections: Int = 256, idleTimeout: Duration = .seconds(60),
                bodyLimit: Int = 1 << 18, readLimit: Int = 1 << 22,
                tooLarge: (status: Int, body: [UInt8]) = (413, Array(#"{"error":"the body is too large"}"#.utf8)),
                serverName: String? = nil) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.bodyLimit = bodyLimit
        self.readLimit = readLimit
        self.tooLarge = tooLarge
        self.serverName = serverName
    }

    /// `idleTimeout` in whole seconds, rounded up (libmicrohttpd's unit).
    var idleTimeoutSeconds: UInt32 {
        let (seconds, attoseconds) = idleTimeout.components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return 0 }
        let whole = attoseconds > 0 ? seconds.addingReportingOverflow(1) : (partialValue: seconds, overflow: false)
        return whole.overflow ? UInt32.max : UInt32(clamping: whole.partialValue)
    }
}

/// One request, its body read whole (up to the limit).
public struct HTTPServeRequest: Sendable {
    public var method: String
    /// As the client sent it: the path and query, still percent-encoded.
    public var target: String
    /// `HTTP/1.1`, `HTTP/1.0`.
    public var version: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The body was longer than `bodyLimit`; `body` is empty.
    public var bodyTooLarge: Bool

    public init(method: String, target: String, version: String = "HTTP/1.1", headers: [(name: String, value: String)] = [],
                body: [UInt8] = [], bodyTooLarge: Bool = false) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }

    /// The first header of that name (any case).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The target's path (before `?`).
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }

    /// The target's query (after `?`), if any.
    public var query: Substring? {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count == 2 ? parts[1] : nil
    }

    /// The first query parameter of that name, percent-decoded (`+` is a space).
    public func queryParameter(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard Self.percentDecoded(parts[0]) == name else { continue }
            return parts.count == 2 ? Self.percentDecoded(parts[1]) : ""
        }
        return nil
    }

    /// `%XX` decoded; a `%` not followed by two hex digits is kept as it is.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2]) {
                bytes.append(high << 4 | low)
                i += 3
            } else {
                bytes.append(utf8[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : utf8[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The answer to a request: a body in memory, or one written as it is made (chunked).
public struct HTTPServeResponse: Sendable {
    public enum Body: Sendable {
        case bytes([UInt8])
        /// Written through the writer as the producer makes it; the response ends when the producer
        /// returns. The producer's task is cancelled (and `write` throws) when the client goes away
        /// or the server stops.
        case stream(@Sendable (HTTPServeStreamWriter) async throws -> Void)
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Writes a streamed body: `write` returns once the connection took the bytes (so a client that
/// stops reading holds the producer, not memory); throws `CancellationError` when the client is gone.
public struct HTTPServeStreamWriter: Sendable {
    let pipe: StreamPipe

    public func write(_ bytes: [UInt8]) async throws {
        try await pipe.write(bytes)
    }
}

/// Why the server could not start.
public struct HTTPServeError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
