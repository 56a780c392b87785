import AppSimulator
import CallRuntime
import Foundation
import Synchronization
import Hummingbird
import HummingbirdCore
import IPCWire
import Logging
import ControlAPISpec

/// Where the control API listens and who may use it.
public struct ControlServerConfiguration: Sendable, Equatable {
    public var host: String
    /// 0: any free port (read `ControlServer.port` after `start`).
    public var port: Int
    /// Required on every request (`Authorization: Bearer TOKEN`, or `?token=TOKEN` for the
    /// browser's EventSource) when set; required to be set when `host` is not a loopback address.
    public var token: String?
    /// A connection with no request in flight for this long is closed (a response being written,
    /// such as the event stream, keeps it open).
    public var idleTimeout: Duration
    /// At most this many connections at once; further ones wait in the listen backlog until one
    /// closes.
    public var maxConnections: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, idleTimeout: Duration = .seconds(60),
                maxConnections: Int = 256) {
        self.host = host
        self.port = port
        self.token = token
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
    }

    /// Parses `HOST:PORT` (`[::1]:8080` for IPv6).
    public init(address: String, token: String?) throws(ControlError) {
        var host = "", portText = ""
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            host = String(address[address.index(after: address.startIndex)..<close])
            let rest = address[address.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .badRequest("--control must be HOST:PORT; got '\(address)'", field: "control") }
            portText = String(rest.dropFirst())
        } else if let colon = address.lastIndex(of: ":") {
            host = String(address[..<colon])
            portText = String(address[address.index(after: colon)...])
        } else {
            throw .badRequest("--control must be HOST:PORT (e.g. 127.0.0.1:8080); got '\(address)'", field: "control")
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw .badRequest("--control must be HOST:PORT with a port 0-65535; got '\(address)'", field: "control")
        }
        self.init(host: host, port: port, token: token)
    }

    /// 127.0.0.0/8, ::1 and localhost.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The token rule: any address but loopback needs a token.
    public func validate() throws(ControlError) {
        if let token, token.isEmpty {
            throw .badRequest("--control-token must not be empty", field: "control-token")
        }
        if maxConnections < 1 {
            throw .badRequest("the control API needs at least one connection", field: "maxConnections")
        }
        if !isLoopback, token == nil {
            throw .badRequest("binding the control API to \(host) (not loopback) requires --control-token",
                              field: "control-token")
        }
    }
}

/// The HTTP control API, web console and /metrics of one process.
public final class ControlServer: Sendable {
    public let configuration: ControlServerConfiguration
    public let registry: DeviceRegistry
    public let phone: ConsolePhone?
    private let log: EventLog
    private let routeTable = RouteTable()
    private let running = Mutex<(task: Task<Void, Never>?, port: Int?)>((nil, nil))

    /// Checks the token rule at once: a non-loopback address without a token is refused here.
    public init(configuration: ControlServerConfiguration, registry: DeviceRegistry, phone: ConsolePhone? = nil,
                log: EventLog = EventLog()) throws(ControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.registry = registry
        self.phone = phone
        self.log = log
    }

    /// The port it listens on (after `start`).
    public var port: Int? { running.withLock { $0.port } }

    /// `http://host:port` (after `start`).
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port ?? configuration.port)"
    }

    /// Binds and serves; returns once the socket listens (or throws why it could not).
    public func start() async throws(ControlError) {
        // Guards first (cross-site, token, method and media type), then the routes the generator
        // made from openapi.yaml (ControlHandlers answers them).
        let router = Router()
        router.add(middleware: ErrorAsJSONMiddleware())
        router.add(middleware: CrossSiteGuard(configuration: configuration))
        if let token = configuration.token { router.add(middleware: BearerTokenMiddleware(token: token)) }
        router.add(middleware: RequestShapeGuard(routes: routeTable))
        do {
            try ControlHandlers(registry: registry, phone: phone)
                .registerHandlers(on: RecordingTransport(router: router, table: routeTable), middlewares: [ControlErrorMiddleware()])
        } catch {
            throw ControlError(status: 500, "cannot register the API's routes: \(error)")
        }

        let started = StartSignal()
        var logger = Logger(label: "ipcemu.control")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(Int64(clamping: configuration.idleTimeout.components.seconds) * 1_000_000_000
                + configuration.idleTimeout.components.attoseconds / 1_000_000_000))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ipcemu",
                                 availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections)),
            onServerRunning: { channel in started.fire(.success(channel.localAddress?.port ?? 0)) },
            logger: logger
        )
        let task = Task {
            do {
                try await app.run()
                started.fire(.failure(ControlError(status: 500, "the control server stopped before it listened")))
            } catch {
                started.fire(.failure(ControlError(status: 500, "cannot listen on \(configuration.host):\(configuration.port): \(error)")))
            }
        }
        running.withLock { $0.task = task }
        switch await started.wait() {
        case .success(let port):
            running.withLock { $0.port = port }
            log.log(.info, "control API listening", fields: [("url", url), ("token", configuration.token == nil ? "none" : "required")])
        case .failure(let error):
            throw error
        }
    }

    /// Ends the event streams, then stops the server.
    public func stop() async {
        registry.hub.finishAll()
        let task = running.withLock { r -> Task<Void, Never>? in
            defer { r.task = nil }
            return r.task
        }
        task?.cancel()
        await task?.value
    }
}

/// Resolves once with the bound port or why binding failed.
final class StartSignal: Sendable {
    private struct State {
        var result: Result<Int, ControlError>?
        var waiter: CheckedContinuation<Result<Int, ControlError>, Never>?
    }
    private let state = Mutex(State())

    func fire(_ r: Result<Int, ControlError>) {
        let w = state.withLock { s -> CheckedContinuation<Result<Int, ControlError>, Never>? in
            guard s.result == nil else { return nil }
            s.result = r
            defer { s.waiter = nil }
            return s.waiter
        }
        w?.resume(returning: r)
    }

    func wait() async -> Result<Int, ControlError> {
        await withCheckedContinuation { c in
            let ready = state.withLock { s -> Result<Int, ControlError>? in
                if let result = s.result { return result }
                s.waiter = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }
}

/// Every request must carry the token: `Authorization: Bearer TOKEN`, or `?token=TOKEN` (the
/// browser's EventSource cannot set headers).
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let header = request.headers[.authorization]
        let presented = header.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            ?? request.uri.queryParameters.get("token")
        guard let presented, Self.same(presented, token) else {
            var r = ControlErrorResponse.make(ControlError(status: 401, "missing or wrong bearer token", field: "Authorization"))
            r.headers[.wwwAuthenticate] = "Bearer"
            return r
        }
        return try await next(request, context)
    }

    /// Compares without an early exit.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = x.count ^ y.count
        for i in 0..<min(x.count, y.count) { diff |= Int(x[i] ^ y[i]) }
        return diff == 0
    }
}

/// Errors thrown by Hummingbird itself (unknown path, wrong method) answer in the API's JSON shape too.
struct ErrorAsJSONMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let status = error.status
            let message = status == .notFound ? "no such endpoint: \(request.method.rawValue) \(request.uri.path)" : (error.body ?? status.reasonPhrase)
            return ControlErrorResponse.make(ControlError(status: status.code, message))
        }
    }
}

/// One route the server answers, as openapi.yaml names it (`/api/devices/{devId}`).
public struct ControlRoute: Sendable, Hashable, CustomStringConvertible {
    public var method: String
    public var path: String
    public var description: String { "\(method) \(path)" }
}

extension ControlServer {
    /// Every route the server answers (method and OpenAPI path), as the generated server
    /// registered them (after `start`).
    public var routes: [ControlRoute] { routeTable.all }

    /// The OpenAPI document the server and the CLI's client are generated from (openapi.yaml).
    public static var openAPIDocument: String { String(decoding: OpenAPISpec.yaml, as: UTF8.self) }
}
