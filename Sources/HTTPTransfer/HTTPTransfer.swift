import CHTTPTransfer
import Foundation
import Synchronization

/// One HTTP(S) request.
public struct HTTPTransferRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// PEM of the only CA to trust; nil: the system's CAs.
    public var caPEM: String?
    /// The whole transfer, connection and body included.
    public var timeout: Duration?
    /// Until the response's headers are in (a stream's body may then last any time).
    public var headersTimeout: Duration?
    public var tls12Minimum: Bool

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                caPEM: String? = nil, timeout: Duration? = nil, headersTimeout: Duration? = nil, tls12Minimum: Bool = true) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.caPEM = caPEM
        self.timeout = timeout
        self.headersTimeout = headersTimeout
        self.tls12Minimum = tls12Minimum
    }
}

/// Why a transfer failed: libcurl's code and message (never a body).
public struct HTTPTransferError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable { case timeout, connectionRefused, certificateVerification, tls, cancelled, other }
    public let code: Int32
    public let message: String

    public var kind: Kind {
        switch code {
        case Int32(CHTTP_TIMEOUT): .timeout
        case Int32(CHTTP_CONNECT_FAILED): .connectionRefused
        case Int32(CHTTP_PEER_VERIFICATION): .certificateVerification
        case Int32(CHTTP_TLS_CONNECT): .tls
        case Int32(CHTTP_ABORTED_BY_CALLBACK), Int32(CHTTP_WRITE_ERROR): .cancelled
        default: .other
        }
    }

    public var description: String { "\(message) (libcurl \(code))" }
}

/// A response whose headers are in; its body arrives through `body` as the server sends it.
public struct HTTPTransferResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    /// Ends when the transfer does; throws `HTTPTransferError` if it fails midway. Ending the
    /// iteration early stops the transfer.
    public let body: AsyncThrowingStream<[UInt8], any Error>
}

/// HTTP(S) over the system's libcurl (TLS through the system's OpenSSL; issue 22: no TLS stack
/// compiled from source): each transfer on a thread of its own, so a slow server never holds one
/// of Swift's cooperative threads.
public enum HTTPTransfer {
    /// Starts the transfer; returns once the final response's headers are in.
    public static func start(_ request: HTTPTransferRequest) async throws(HTTPTransferError) -> HTTPTransferResponse {
        let (body, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        let transfer = Transfer(body: continuation)
        continuation.onTermination = { _ in transfer.stop() }
        let result: Result<(Int, [(name: String, value: String)]), HTTPTransferError> = await withCheckedContinuation { headers in
            transfer.setHeadersWaiter(headers)
            let thread = Thread { transfer.run(request) }
            thread.name = "ipcemu-http"
            thread.start()
            if let limit = request.headersTimeout {
                Task {
                    try? await Task.sleep(for: limit)
                    transfer.headersTimedOut(after: limit)
                }
            }
        }
        switch result {
        case .success(let (status, headerFields)): return HTTPTransferResponse(status: status, headers: headerFields, body: body)
        case .failure(let error): throw error
        }
    }

    /// The whole exchange, the body read up to `bodyLimit` bytes plus one (so a caller sees it was
    /// longer); the rest is not read.
    public static func perform(_ request: HTTPTransferRequest, bodyLimit: Int) async throws(HTTPTransferError)
        -> (status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        let response = try await start(request)
        let keep = max(0, bodyLimit) + 1
        var collected: [UInt8] = []
        do {
            for try await chunk in response.body {
                collected += chunk.prefix(keep - collected.count)
                if collected.count >= keep { break }
            }
        } catch let error as HTTPTransferError {
            throw error
        } catch {
            throw HTTPTransferError(code: -1, message: "\(error)")
        }
        return (response.status, response.headers, collected)
    }
}

/// The state one transfer's thread and its callers share.
final class Transfer: Sendable {
    private struct State {
        var headersWaiter: CheckedContinuation<Result<(Int, [(name: String, value: String)]), HTTPTransferError>, Never>?
        var status = 0
        var headers: [(name: String, value: String)] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let body: AsyncThrowingStream<[UInt8], any Error>.Continuation

    init(body: AsyncThrowingStream<[UInt8], any Error>.Continuation) {
        self.body = body
    }

    func setHeadersWaiter(_ waiter: CheckedContinuation<Result<(Int, [(name: String, value: String)]), HTTPTransferError>, Never>) {
        state.withLock { $0.headersWaiter = waiter }
    }

    func stop() { state.withLock { $0.stopped = true } }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// The headers did not come in time: the caller learns it now, and the transfer stops.
    func headersTimedOut(after limit: Duration) {
        let waiter = state.withLock { s in
            let w = s.headersWaiter
            s.headersWaiter = nil
            if w != nil { s.stopped = true }
            return w
        }
        waiter?.resume(returning: .failure(HTTPTransferError(code: Int32(CHTTP_TIMEOUT), message: "no response in \(limit)")))
    }

    /// A header line; an empty one ends a response's headers (1xx ones are skipped).
    func header(_ line: String) -> Bool {
        if line.hasPrefix("HTTP/") {
            let status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            state.withLock { $0.status = status; $0.headers = [] }
        } else if line.isEmpty {
            let waiter: CheckedContinuation<Result<(Int, [(name: String, value: String)]), HTTPTransferError>, Never>?
            let ready: (Int, [(name: String, value: String)])
            (waiter, ready) = state.withLock { s in
                guard s.status >= 200 else { return (nil, (0, [])) }
                let w = s.headersWaiter
                s.headersWaiter = nil
                return (w, (s.status, s.headers))
            }
            waiter?.resume(returning: .success(ready))
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            state.withLock { $0.headers.append((name, value)) }
        }
        return !isStopped
    }

    func bodyBytes(_ bytes: [UInt8]) -> Bool {
        guard !isStopped else { return false }
        body.yield(bytes)
        return true
    }

    func run(_ request: HTTPTransferRequest) {
        let context = Unmanaged.passRetained(self)
        defer { context.release() }
        var callbacks = chttp_callbacks(
            context: context.toOpaque(),
            on_header: { context, line, length in
                guard let context, let line else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
                let text = String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(line), count: length), as: UTF8.self)
                return transfer.header(text) ? 1 : 0
            },
            on_body: { context, bytes, length in
                guard let context else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
                let chunk = bytes.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
                return transfer.bodyBytes(chunk) ? 1 : 0
            },
            keep_going: { context in
                guard let context else { return 0 }
                return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().isStopped ? 0 : 1
            })
        var status = 0
        let errorSize = 512
        var error = [CChar](repeating: 0, count: errorSize)
        let headerLines = request.headers.map { "\($0.name): \($0.value)" }
        let code = withCStrings(headerLines) { headerPointers in
            request.method.withCString { method in
                request.url.withCString { url in
                    request.body.withUnsafeBufferPointer { body in
                        withOptionalCString(request.caPEM) { ca in
                            var raw = chttp_request(
                                method: method, url: url, headers: headerPointers.baseAddress, header_count: headerPointers.count,
                                body: body.baseAddress, body_length: body.count, ca_pem: ca, ca_pem_length: request.caPEM?.utf8.count ?? 0,
                                timeout_ms: request.timeout.map { Self.milliseconds($0) } ?? 0, tls12_minimum: request.tls12Minimum ? 1 : 0)
                            return chttp_perform(&raw, &callbacks, &status, &error, errorSize)
                        }
                    }
                }
            }
        }
        let failure: HTTPTransferError? = code == 0 ? nil
            : HTTPTransferError(code: code, message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        // Headers never completed (a failure, or a server that closed early): the caller learns why.
        let waiter = state.withLock { s in
            let w = s.headersWaiter
            s.headersWaiter = nil
            return w
        }
        if let waiter {
            waiter.resume(returning: .failure(failure ?? HTTPTransferError(code: -1, message: "the response ended before its headers")))
        }
        if let failure, failure.kind != .cancelled { body.finish(throwing: failure) } else { body.finish() }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        guard !ms.overflow else { return Int.max }
        return max(1, Int(ms.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}

/// Runs `body` with NUL-terminated copies of `strings` (freed afterwards).
private func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer(body)
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString(body)
}
