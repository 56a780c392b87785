import AsyncHTTPClient
import Foundation
import IPCWire
import NIOCore
import NIOHTTP1

/// One HTTP answer, read whole.
public struct ControlHTTPReply: Sendable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: JSONValue? { try? JSONValue.parse(body) }
}

/// The tests' HTTP client (AsyncHTTPClient): any method, path and body, so tests can send what the
/// generated client never would (bad bodies, unknown paths).
public struct ControlHTTPClient: Sendable {
    public let baseURL: String
    public let token: String?

    public init(baseURL: String, token: String? = nil) throws {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
    }

    /// `json` or `body` goes out as `Content-Type: application/json` unless `headers` says otherwise.
    public func request(_ method: String, _ path: String, json: JSONValue? = nil, body: [UInt8]? = nil,
                        headers: [(String, String)] = [], timeout: Double = 10) async throws -> ControlHTTPReply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = HTTPMethod(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let payload = json.map({ $0.serialized() }) ?? body {
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                request.headers.add(name: "Content-Type", value: "application/json")
            }
            request.body = .bytes(ByteBuffer(bytes: payload))
        }
        for (k, v) in headers { request.headers.add(name: k, value: v) }
        let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        var fields: [String: String] = [:]
        for (name, value) in response.headers { fields[name.lowercased()] = value }
        return ControlHTTPReply(status: Int(response.status.code), headers: fields, body: Array(bytes.readableBytesView))
    }
}

/// A server-sent-event stream read in the background: `events` yields each event's `data`.
public final class ControlEventStream: @unchecked Sendable {
    public let events: AsyncStream<String>
    private let lock = NSLock()
    private var opened = false
    private var task: Task<Void, Never>?

    public init(client: ControlHTTPClient, path: String = "/api/events") {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        events = stream
        task = Task { [weak self] in
            defer { sink.finish() }
            var request = HTTPClientRequest(url: client.baseURL + path)
            if let token = client.token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            guard let response = try? await HTTPClient.shared.execute(request, timeout: .hours(24)), response.status == .ok else { return }
            var pending: [UInt8] = []
            do {
                for try await chunk in response.body {
                    pending += chunk.readableBytesView
                    while let end = Self.eventEnd(pending) {
                        let event = String(decoding: pending[..<end], as: UTF8.self)
                        pending.removeFirst(end + 2)
                        self?.lock.withLock { self?.opened = true }
                        for line in event.split(separator: "\n") where line.hasPrefix("data:") {
                            sink.yield(String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces))
                        }
                    }
                }
            } catch {}
        }
    }

    static func eventEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for i in 0..<(bytes.count - 1) where bytes[i] == 0x0A && bytes[i + 1] == 0x0A { return i }
        return nil
    }

    /// True once the server's first event (its opening comment) arrived.
    public func waitUntilOpen(timeout: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while ContinuousClock.now < deadline {
            if lock.withLock({ opened }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return lock.withLock { opened }
    }

    public func close() { task?.cancel() }
}
