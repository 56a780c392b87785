import Foundation
import HTTPServe
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// The generated server's routes (OpenAPIRuntime's `ServerTransport`) on HTTPServe, the system's
/// libmicrohttpd (issue 22: no SwiftNIO, no Hummingbird). `registerHandlers(on:)` registers one
/// handler per operation with its OpenAPI path (`/api/devices/{devId}`); `answer` finds the route a
/// request's path and method match (`{name}` matches one non-empty segment, passed still
/// percent-encoded as the path parameter `name`: the generated code decodes it), and turns the
/// request and the handler's response into HTTPServe's.
final class MicroHTTPServerTransport: ServerTransport, Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    private struct Route {
        var method: HTTPRequest.Method
        var template: [Substring]
        var handler: Handler
        /// Literal segments: a template with more of them wins over one with parameters there.
        var literals: Int { template.filter { !$0.hasPrefix("{") }.count }
    }

    private let routes = Mutex<[Route]>([])

    func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
        routes.withLock { $0.append(Route(method: method, template: path.split(separator: "/", omittingEmptySubsequences: false), handler: handler)) }
    }

    /// Every route registered, as openapi.yaml names it.
    var all: [ControlRoute] {
        routes.withLock { $0.map { ControlRoute(method: $0.method.rawValue, path: $0.template.joined(separator: "/")) } }
    }

    /// The methods of the path templates `path` matches; empty when no template matches.
    func methods(for path: Substring) -> [String] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return Set(routes.withLock { $0.filter { Self.parameters(of: $0.template, in: parts) != nil }.map(\.method.rawValue) }).sorted()
    }

    /// The route of that method whose template `path` matches best, and its path parameters.
    private func route(_ method: String, _ path: Substring) -> (Handler, [String: Substring])? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let candidates = routes.withLock { $0.filter { $0.method.rawValue == method } }
        var best: (route: Route, parameters: [String: Substring])?
        for route in candidates {
            guard let parameters = Self.parameters(of: route.template, in: parts) else { continue }
            if best == nil || route.literals > (best?.route.literals ?? 0) { best = (route, parameters) }
        }
        return best.map { ($0.route.handler, $0.parameters) }
    }

    /// `{name}` segments' values when every segment fits the template; nil otherwise.
    private static func parameters(of template: [Substring], in parts: [Substring]) -> [String: Substring]? {
        guard template.count == parts.count else { return nil }
        var found: [String: Substring] = [:]
        for (t, p) in zip(template, parts) {
            if t.hasPrefix("{"), t.hasSuffix("}") {
                guard !p.isEmpty else { return nil }
                found[String(t.dropFirst().dropLast())] = p
            } else if t != p {
                return nil
            }
        }
        return found
    }

    /// Runs the operation the request names (after the guards): 404 in the API's JSON shape when
    /// none does.
    func answer(_ request: HTTPServeRequest) async -> HTTPServeResponse {
        guard let (handler, parameters) = route(request.method, request.path) else {
            return ControlErrorResponse.make(ControlError(status: 404, "no such endpoint: \(request.method) \(request.path)"))
        }
        guard let method = HTTPRequest.Method(request.method) else {
            return ControlErrorResponse.make(ControlError(status: 400, "not an HTTP method: \(request.method)"))
        }
        var fields = HTTPFields()
        for (name, value) in request.headers {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        // An empty body is no body (POST or PUT without one: its Content-Type does not matter).
        var body: HTTPBody?
        if request.body.isEmpty {
            fields[.contentType] = nil
            fields[.contentLength] = "0"
        } else {
            body = HTTPBody(request.body)
        }
        let head = HTTPRequest(method: method, scheme: "http", authority: request.header("Host"), path: request.target, headerFields: fields)
        do {
            let (response, responseBody) = try await handler(head, body, ServerRequestMetadata(pathParameters: parameters))
            return try await Self.response(response, responseBody)
        } catch {
            return ControlErrorResponse.make(ControlError(status: 500, "internal error: \(error)"))
        }
    }

    /// A body of known length is sent from memory; one of unknown length (the event stream) is
    /// streamed as the handler's sequence produces it.
    private static func response(_ response: HTTPResponse, _ body: HTTPBody?) async throws -> HTTPServeResponse {
        let headers = response.headerFields.map { (name: $0.name.rawName, value: $0.value) }
        guard let body else { return HTTPServeResponse(status: response.status.code, headers: headers) }
        switch body.length {
        case .known(let length):
            let bytes = try await [UInt8](collecting: body, upTo: Int(clamping: length))
            return HTTPServeResponse(status: response.status.code, headers: headers, body: .bytes(bytes))
        case .unknown:
            return HTTPServeResponse(status: response.status.code, headers: headers, body: .stream { writer in
                for try await chunk in body { try await writer.write(Array(chunk)) }
            })
        }
    }
}
