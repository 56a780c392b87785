import Foundation
import HTTPTransfer
import HTTPTypes
import OpenAPIRuntime

/// The generated client's transport (OpenAPIRuntime's `ClientTransport`) over HTTPTransfer, the
/// system's libcurl: the lightest one here (issue 22: no SwiftNIO client, no TLS stack compiled from
/// source). The response body streams as it arrives (`ipcemu events` reads the event stream);
/// `timeout` bounds the wait for a response's headers, not a stream's length.
struct TransferClientTransport: ClientTransport {
    /// A request body is read whole before it is sent; none of the API's is near this.
    static let requestBodyLimit = 16 << 20
    let timeout: Duration

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: [UInt8] = []
        if let body { bytes = try await [UInt8](collecting: body, upTo: Self.requestBodyLimit) }
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let outgoing = HTTPTransferRequest(
            method: request.method.rawValue, url: base + (request.path ?? ""),
            headers: request.headerFields.map { ($0.name.rawName, $0.value) }, body: bytes,
            headersTimeout: timeout, tls12Minimum: true)
        let response = try await HTTPTransfer.start(outgoing)
        var fields = HTTPFields()
        for header in response.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        let length: HTTPBody.Length = fields[.contentLength].flatMap { Int64($0) }.map { .known($0) } ?? .unknown
        let chunks = response.body.map { ArraySlice($0) }
        return (HTTPResponse(status: .init(code: response.status), headerFields: fields),
                HTTPBody(chunks, length: length, iterationBehavior: .single))
    }
}
