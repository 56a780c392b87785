import AppSimulator
import CallRuntime
import Foundation
import HTTPServe
import IPCWire
import Synchronization
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
    /// A connection with nothing sent or received for this long is closed (a response being
    /// written, such as the event stream with its keepalives, keeps it open). Whole seconds: a part
    /// of one counts as one (libmicrohttpd's unit).
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
    private let transport = MicroHTTPServerTransport()
    private let server = Mutex<HTTPServer?>(nil)

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
    public var port: Int? { server.withLock { $0?.port } }

    /// `http://host:port` (after `start`).
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(port ?? configuration.port)"
    }

    /// Binds and serves; returns once the socket listens (or throws why it could not).
    public func start() async throws(ControlError) {
        // The routes the generator made from openapi.yaml (ControlHandlers answers them).
        do {
            try ControlHandlers(registry: registry, phone: phone)
                .registerHandlers(on: transport, middlewares: [ControlErrorMiddleware()])
        } catch {
            throw ControlError(status: 500, "cannot register the API's routes: \(error)")
        }
        let http = HTTPServeConfiguration(
            host: configuration.host, port: configuration.port, maxConnections: configuration.maxConnections,
            idleTimeout: configuration.idleTimeout, bodyLimit: RequestShapeGuard.bodyLimit,
            // A body declared much bigger than any the API takes is not read at all.
            readLimit: RequestShapeGuard.bodyLimit * 16,
            tooLarge: (413, ControlErrorResponse.bytes(RequestShapeGuard.tooLarge)), serverName: "ipcemu")
        let log = self.log
        let answer = Self.answer(configuration: configuration, transport: transport)
        let started: HTTPServer
        do {
            started = try HTTPServer(configuration: http, log: { message in log.log(.debug, "control HTTP: \(message)") },
                                     handler: answer)
        } catch {
            throw ControlError(status: 500, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        server.withLock { $0 = started }
        log.log(.info, "control API listening", fields: [("url", url), ("token", configuration.token == nil ? "none" : "required")])
    }

    /// The guards first (cross-site, token, method, body size and media type), then the operation.
    private static func answer(configuration: ControlServerConfiguration, transport: MicroHTTPServerTransport) -> HTTPServer.Handler {
        let crossSite = CrossSiteGuard(configuration: configuration)
        let token = configuration.token.map(BearerTokenGuard.init)
        return { request in
            if let refusal = crossSite.refusal(request) { return ControlErrorResponse.make(refusal) }
            if let refusal = token?.refusal(request) { return refusal }
            if let refusal = RequestShapeGuard.refusal(request, allowed: transport.methods(for: request.path)) { return refusal }
            return await transport.answer(request)
        }
    }

    /// Ends the event streams, then stops the server.
    public func stop() async {
        registry.hub.finishAll()
        let running = server.withLock { s -> HTTPServer? in
            defer { s = nil }
            return s
        }
        await running?.stop()
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
    public var routes: [ControlRoute] { transport.all }

    /// The OpenAPI document the server and the CLI's client are generated from (openapi.yaml).
    public static var openAPIDocument: String { String(decoding: OpenAPISpec.yaml, as: UTF8.self) }
}
