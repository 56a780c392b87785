import Foundation
import HTTPTypes
import OpenAPIRuntime
import ControlAPISpec

/// A control command that failed: the API's answer (`POST /api/...: HTTP 404: no device 'x'`) or
/// why the API could not be reached.
package struct ControlClientFailure: Error, CustomStringConvertible {
    package let description: String
}

/// The CLI's client: the one generated from openapi.yaml (`Client`) over libcurl (`TransferClientTransport`), with
/// the bearer token on every request and the API's JSON errors turned into failures.
package struct ControlClient: Sendable {
    package let baseURL: String
    package let client: Client

    /// `baseURL`: `http://HOST:PORT` (an `https` URL works too: libcurl speaks TLS).
    package init(baseURL: String, token: String?, timeout: Duration = .seconds(60)) throws(ControlError) {
        let trimmed = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard let url = URL(string: trimmed), let scheme = url.scheme, scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty, url.path.isEmpty, url.query == nil else {
            throw ControlError.badRequest("the control API URL must be http://HOST:PORT; got '\(baseURL)'", field: "control")
        }
        let seconds = max(1, timeout.components.seconds)
        let transport = TransferClientTransport(timeout: .seconds(seconds))
        self.baseURL = trimmed
        self.client = Client(serverURL: url, transport: transport,
                             middlewares: [APIErrorMiddleware(), BearerTokenClientMiddleware(token: token)])
    }

    /// One operation; `what` (`GET /api/devices`) names it in a failure.
    package func call<T>(_ what: String, _ body: (Client) async throws -> T) async throws(ControlClientFailure) -> T {
        do {
            return try await body(client)
        } catch let error as ClientError {
            if let api = error.underlyingError as? APIFailure {
                throw ControlClientFailure(description: "\(what): HTTP \(api.status): \(api.message)")
            }
            throw ControlClientFailure(description: "cannot reach the control API at \(baseURL): \(error.underlyingError)")
        } catch {
            throw ControlClientFailure(description: "\(what): \(error)")
        }
    }
}

/// A non-2xx answer: its status and the API's message (`error` of its JSON body, else the text).
struct APIFailure: Error {
    var status: Int
    var message: String
}

struct APIErrorMiddleware: ClientMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?))
        async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.kind != .successful else { return (response, responseBody) }
        var text = ""
        if let responseBody { text = (try? await String(collecting: responseBody, upTo: 1 << 20)) ?? "" }
        var message = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let error = try? JSONDecoder().decode(Components.Schemas._Error.self, from: Data(text.utf8)) { message = error.error }
        throw APIFailure(status: response.status.code, message: message.isEmpty ? response.status.reasonPhrase : message)
    }
}

struct BearerTokenClientMiddleware: ClientMiddleware {
    let token: String?

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?))
        async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        return try await next(request, body, baseURL)
    }
}
