import CHTTPServe
import Foundation
import Synchronization

/// An HTTP/1.1 server on the system's GNU libmicrohttpd (issue 22: no server stack compiled from
/// source). One thread per connection: a request's handler runs as a Swift task while its
/// connection's thread waits for the answer, so a slow handler or client never holds one of
/// Swift's cooperative threads. Streamed bodies are pulled by that thread one chunk at a time.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPServeRequest) async -> HTTPServeResponse

    /// The port it listens on.
    public let port: Int
    private let core: ServerCore
    private let handle: Mutex<ServerHandle?>

    /// Binds, listens and serves; throws why it could not (the address taken, a name that does not
    /// resolve).
    public init(configuration: HTTPServeConfiguration, log: @escaping @Sendable (String) -> Void = { _ in },
                handler: @escaping Handler) throws(HTTPServeError) {
        let core = ServerCore(handler: handler, log: log, serverName: configuration.serverName)
        let context = Unmanaged.passRetained(core)
        var callbacks = chs_callbacks(
            context: context.toOpaque(),
            handle: { context, request in
                guard let context, let request else { return }
                Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().serve(request)
            },
            stream_read: { stream, buffer, max in
                guard let stream, let buffer else { return Int(CHS_STREAM_ERROR) }
                return Unmanaged<StreamPipe>.fromOpaque(stream).takeUnretainedValue().read(into: buffer, max: Int(clamping: max))
            },
            stream_free: { stream in
                guard let stream else { return }
                let pipe = Unmanaged<StreamPipe>.fromOpaque(stream).takeRetainedValue()
                pipe.cancel()
                pipe.streams.remove(pipe)
            },
            log: { context, message in
                guard let context, let message else { return }
                Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().log(String(cString: message))
            })
        var server: OpaquePointer?
        var port: Int32 = -1
        let errorSize = 512
        var error = [CChar](repeating: 0, count: errorSize)
        let tooLarge = configuration.tooLarge
        let rc = configuration.host.withCString { host in
            tooLarge.body.withUnsafeBufferPointer { body in
                var raw = chs_config(
                    host: host, port: Int32(clamping: configuration.port),
                    max_connections: UInt32(clamping: max(1, configuration.maxConnections)),
                    idle_timeout_seconds: configuration.idleTimeoutSeconds,
                    body_limit: max(0, configuration.bodyLimit), read_limit: max(0, configuration.readLimit),
                    too_large_status: UInt32(clamping: tooLarge.status), too_large_body: body.baseAddress,
                    too_large_body_length: body.count)
                return chs_start(&raw, &callbacks, &server, &port, &error, errorSize)
            }
        }
        guard rc == 0, let server else {
            context.release()
            throw HTTPServeError(message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.core = core
        self.port = Int(port)
        self.handle = Mutex(ServerHandle(server: server, context: context))
    }

    /// Streams being sent right now.
    public var openStreams: Int { core.streams.count }

    /// Gives streams that are ending (their producers returning) up to `drain` to finish, then stops
    /// accepting, closes every connection (streams still open are cut, handlers still running are
    /// cancelled) and waits for their threads. Idempotent.
    public func stop(drain: Duration = .seconds(2)) async {
        await core.streams.waitUntilEmpty(timeout: drain)
        guard let h = handle.withLock({ h -> ServerHandle? in
            defer { h = nil }
            return h
        }) else { return }
        core.stopping()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // chs_stop joins the connections' threads: not on a cooperative thread.
            let thread = Thread {
                chs_stop(h.server)
                h.context.release()
                done.resume()
            }
            thread.name = "ipcemu-http-stop"
            thread.start()
        }
    }
}

/// The C server and the retained context its callbacks use; both end in `stop`.
private struct ServerHandle: @unchecked Sendable {   // a C pointer: used once, by stop()
    let server: OpaquePointer
    let context: Unmanaged<ServerCore>
}
