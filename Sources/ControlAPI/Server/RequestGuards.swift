import CallEngine
import Foundation
import HTTPServe
import HTTPTypes
import OpenAPIRuntime
import ControlAPISpec

/// Refuses cross-site use of the console (docs/robustness.md): a request whose `Origin` is not the
/// host it was sent to (another site's page) gets 403; on a loopback server, a `Host` that is not a
/// loopback name or the bound address (DNS rebinding: a foreign name resolving to 127.0.0.1) gets
/// 403 too. Requests without `Origin` (curl, the CLI, same-origin GETs) pass.
struct CrossSiteGuard {
    let configuration: ControlServerConfiguration

    func refusal(_ request: HTTPServeRequest) -> ControlError? {
        let host = request.header("Host")
        if configuration.isLoopback, let host, !Self.isAllowedHost(host, bound: configuration.host) {
            return ControlError(status: 403, "Host '\(host)' is not this server (loopback only)", field: "Host")
        }
        if let origin = request.header("Origin") {
            guard let host, origin.lowercased() == "http://" + host.lowercased() else {
                return ControlError(status: 403, "cross-site request refused: Origin '\(origin)' is not this server", field: "Origin")
            }
        }
        return nil
    }

    /// `127.0.0.1:8080`, `localhost`, `[::1]:8080`, or the bound host, with any port.
    static func isAllowedHost(_ authority: String, bound: String) -> Bool {
        var name = Substring(authority)
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = name[name.index(after: name.startIndex)..<close]
        } else if let colon = name.lastIndex(of: ":"), name[name.index(after: colon)...].allSatisfy(\.isNumber) {
            name = name[..<colon]
        }
        let n = name.lowercased()
        if n == bound.lowercased() || n == "localhost" || n.hasSuffix(".localhost") || n == "::1" { return true }
        let octets = n.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}

/// Every request must carry the token: `Authorization: Bearer TOKEN`, or `?token=TOKEN` (the
/// browser's EventSource cannot set headers).
struct BearerTokenGuard {
    let token: String

    func refusal(_ request: HTTPServeRequest) -> HTTPServeResponse? {
        let header = request.header("Authorization")
        let presented = header.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? request.queryParameter("token")
        guard let presented, Self.same(presented, token) else {
            var r = ControlErrorResponse.make(ControlError(status: 401, "missing or wrong bearer token", field: "Authorization"))
            r.headers.append(("WWW-Authenticate", "Bearer"))
            return r
        }
        return nil
    }

    /// Compares without an early exit.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = x.count ^ y.count
        for i in 0..<min(x.count, y.count) { diff |= Int(x[i] ^ y[i]) }
        return diff == 0
    }
}

/// Methods a path does not list get 405 with `Allow`; a POST or PUT with a body must say
/// `Content-Type: application/json` (415 otherwise: no form posts from other sites); bodies are
/// capped at 256 KiB (413). An empty body is none.
enum RequestShapeGuard {
    static var bodyLimit: Int { 1 << 18 }

    /// `allowed`: the methods of the routes the path matches (none: not a route at all).
    static func refusal(_ request: HTTPServeRequest, allowed: [String]) -> HTTPServeResponse? {
        if !allowed.isEmpty, !allowed.contains(request.method) {
            var r = ControlErrorResponse.make(ControlError(status: 405, "\(request.method) is not allowed on \(request.path) (allowed: \(allowed.joined(separator: ", ")))"))
            r.headers.append(("Allow", allowed.joined(separator: ", ")))
            return r
        }
        if request.bodyTooLarge { return ControlErrorResponse.make(tooLarge) }
        guard request.method == "POST" || request.method == "PUT", !request.body.isEmpty else { return nil }
        let type = request.header("Content-Type").map { $0.split(separator: ";").first.map(String.init) ?? "" }?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return ControlErrorResponse.make(ControlError(status: 415, "the body must be JSON (Content-Type: application/json); got \(type ?? "no Content-Type")",
                                                          field: "Content-Type"))
        }
        return nil
    }

    static var tooLarge: ControlError { ControlError(status: 413, "the body is larger than \(bodyLimit) bytes") }
}

/// Errors thrown by the generated layer (a body or parameter that does not fit the schema) and by
/// the handlers (`ControlError`, the engine's `CallActionError`), answered as the API's JSON error.
struct ControlErrorMiddleware: ServerMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?))
        async throws -> (HTTPResponse, HTTPBody?) {
        // An empty body is no body: an operation whose body is optional then sees none.
        var body = body
        if case .known(0)? = body?.length { body = nil }
        do {
            return try await next(request, body, metadata)
        } catch {
            let e = Self.controlError(error)
            return (HTTPResponse(status: .init(code: e.status), headerFields: [.contentType: "application/json"]),
                    HTTPBody(ControlErrorResponse.bytes(e)))
        }
    }

    static func controlError(_ error: any Error) -> ControlError {
        switch error {
        case let e as ControlError: return e
        case let e as CallActionError: return fromEngine(e)
        case let e as DecodingError: return fromDecoding(e)
        case let e as ServerError:
            if e.underlyingError is ControlError || e.underlyingError is CallActionError || e.underlyingError is DecodingError {
                return controlError(e.underlyingError)
            }
            // The runtime's own refusals (a missing body, a content type it does not take).
            let status = e.httpStatus.code == 500 ? 400 : e.httpStatus.code
            return ControlError(status: status, "\(e.causeDescription) \(e.underlyingError)".trimmingCharacters(in: .whitespaces))
        default:
            return ControlError(status: 500, "internal error: \(error)")
        }
    }

    /// The engine refused: a bad argument is the request's fault (400), anything else makes no
    /// sense in the current state (409). Either way the engine's own words.
    static func fromEngine(_ error: CallActionError) -> ControlError {
        switch error {
        case .invalidArgument: ControlError(status: 400, error.description)
        case .noTargets: ControlError(status: 400, error.description, field: "targets")
        case .onCalling, .wrongPhase, .notInThisRole, .shutDown: ControlError(status: 409, error.description)
        }
    }

    /// What the generated decoder found wrong, named by the field (the last key of its path).
    static func fromDecoding(_ error: DecodingError) -> ControlError {
        func field(_ path: [any CodingKey]) -> String? { path.last(where: { $0.intValue == nil })?.stringValue }
        switch error {
        case .keyNotFound(let key, let c):
            let name = key.stringValue
            let path = field(c.codingPath).map { "\($0)." } ?? ""
            return .badRequest("\(path)\(name) is required", field: name)
        case .valueNotFound(let type, let c) where String(describing: type).hasSuffix("AnswerPolicyRequest"):
            // Neither shape of the oneOf fits: name the field that makes it so.
            let detail = String(describing: c.underlyingError ?? error)
            let name = detail.contains("afterSeconds") && !detail.contains("keyNotFound") ? "afterSeconds" : "policy"
            return .badRequest("policy must be answer or reject (afterSeconds, 0 to 3600, allowed), or ignore, busy or manual"
                                + " (afterSeconds not allowed)", field: name)
        case .typeMismatch(let type, let c):
            let name = field(c.codingPath)
            return .badRequest("\(name ?? "the body") must be \(describe(type))", field: name)
        case .valueNotFound(let type, let c):
            let name = field(c.codingPath)
            return .badRequest("\(name ?? "the body") must be \(describe(type)), not null", field: name)
        case .dataCorrupted(let c):
            guard let name = field(c.codingPath) else {
                return .badRequest("the body is not JSON the API takes: \(c.debugDescription)", field: nil)
            }
            if c.debugDescription.hasPrefix("Additional properties are disabled") {
                return .badRequest("unknown field '\(name)' (see /openapi.yaml for the fields this endpoint takes)", field: name)
            }
            return .badRequest("\(name) has a value this endpoint does not take (see /openapi.yaml): \(c.debugDescription)", field: name)
        @unknown default:
            return .badRequest("bad request: \(error)", field: nil)
        }
    }

    static func describe(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if name.contains("Int") { return "an integer" }
        if name.contains("Double") || name.contains("Float") { return "a number" }
        if name.contains("Bool") { return "true or false" }
        if name.contains("String") { return "a string" }
        if name.contains("Array") { return "an array" }
        return "an object"
    }
}

/// The API's JSON error: `{"error": "...", "field": "..."}` (`field` left out when the error is
/// about no one field).
enum ControlErrorResponse {
    static func bytes(_ e: ControlError) -> [UInt8] {
        let body = Components.Schemas._Error(error: e.message, field: e.field)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(body)).map(Array.init) ?? Array(#"{"error":"internal error"}"#.utf8)) + [0x0A]
    }

    static func make(_ e: ControlError) -> HTTPServeResponse {
        HTTPServeResponse(status: e.status, headers: [("Content-Type", "application/json")], body: .bytes(bytes(e)))
    }
}
