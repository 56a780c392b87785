import Foundation
import HTTPTransfer
import IPCWire
import Synchronization

/// One HTTP answer, read whole.
public struct ControlHTTPReply: Sendable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: JSONValue? { try? JSONValue.parse(body) }
}

/// The tests' HTTP client, on the same libcurl transport as the `ipcemu` command (HTTPTransfer):
/// any method, path and body, so tests can send what the generated client never would (bad
/// bodies, unknown paths). No HTTP stack of its own is compiled for the tests (docs/building.md).
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
        var fields: [(name: String, value: String)] = []
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        let payload = json.map { $0.serialized() } ?? body
        if payload != nil, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            fields.append(("Content-Type", "application/json"))
        }
        for (k, v) in headers { fields.append((k, v)) }
        let request = HTTPTransferRequest(method: method, url: baseURL + path, headers: fields, body: payload ?? [],
                                          timeout: .milliseconds(Int64(timeout * 1000)))
        let reply = try await HTTPTransfer.perform(request, bodyLimit: 64 << 20)
        var lowered: [String: String] = [:]
        for (name, value) in reply.headers { lowered[name.lowercased()] = value }
        return ControlHTTPReply(status: reply.status, headers: lowered, body: reply.body)
    }
}

/// A server-sent-event stream read in the background: `events` yields each event's `data`.
public final class ControlEventStream: Sendable {
    public let events: AsyncStream<String>
    private let opened = Mutex(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    public init(client: ControlHTTPClient, path: String = "/api/events") {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        events = stream
        let reader = Task { [weak self] in
            defer { sink.finish() }
            var fields: [(name: String, value: String)] = []
            if let token = client.token { fields.append(("Authorization", "Bearer \(token)")) }
            let request = HTTPTransferRequest(method: "GET", url: client.baseURL + path, headers: fields,
                                              headersTimeout: .seconds(10))
            guard let response = try? await HTTPTransfer.start(request), response.status == 200 else { return }
            var pending: [UInt8] = []
            do {
                for try await chunk in response.body {
                    if Task.isCancelled { return }
                    pending += chunk
                    while let end = Self.eventEnd(pending) {
                        let event = String(decoding: pending[..<end], as: UTF8.self)
                        pending.removeFirst(end + 2)
                        self?.opened.withLock { $0 = true }
                        for line in event.split(separator: "\n") where line.hasPrefix("data:") {
                            sink.yield(String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces))
                        }
                    }
                }
            } catch {}
        }
        task.withLock { $0 = reader }
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
            if opened.withLock({ $0 }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return opened.withLock { $0 }
    }

    public func close() { task.withLock { $0 }?.cancel() }
}
