import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOSSL
import TuyaCloud

/// Carries out `CloudJoinEffect.httpsRequest` (PROTOCOL.md 9.1, 9.3) with AsyncHTTPClient: TLS 1.2
/// or later, trusting only the request's CA (the one iotdns gave, or `--cloud-ca` for iotdns) or,
/// without one, the system's; headers and body byte for byte as the machine built them; the answer
/// read up to the request's limit. What comes back is the machine's input.
public struct CloudHTTPS: Sendable {
    /// The CA (DER) iotdns itself is pinned to when the machine's request names none (`--cloud-ca`).
    public var iotdnsCA: [UInt8]?

    /// No answer is read past this, whatever the request's limit.
    static let hardLimit = 1 << 20

    public init(iotdnsCA: [UInt8]? = nil) {
        self.iotdnsCA = iotdnsCA
    }

    public func perform(_ request: HTTPSRequest) async -> CloudJoinInput {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let der = request.caDER ?? (request.purpose == .resolveEndpoints ? iotdnsCA : nil) {
            do {
                tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: der, format: .der)])
            } catch {
                return .httpsFailed(id: request.id, why: "the CA to trust is not a DER certificate: \(error)")
            }
        }
        outgoing.tlsConfiguration = tls
        let timeout = TimeAmount.milliseconds(max(1, request.timeoutMs))
        do {
            let response = try await HTTPClient.shared.execute(outgoing, timeout: timeout)
            // One byte past the limit is kept, so the machine sees the answer was too large.
            let keep = min(max(0, request.answerLimit), Self.hardLimit) + 1
            var body: [UInt8] = []
            for try await chunk in response.body {
                body += chunk.readableBytesView.prefix(keep - body.count)
                if body.count >= keep { break }
            }
            return .httpsAnswered(id: request.id, status: Int(response.status.code), body: body)
        } catch {
            return .httpsFailed(id: request.id, why: Self.describe(error, host: request.host, port: request.port))
        }
    }

    /// One phrase a person can act on: TLS verification failures say so first.
    static func describe(_ error: any Error, host: String, port: Int) -> String {
        let text = String(describing: error)
        let place = "\(host):\(port)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("unable to get local issuer") {
            return "TLS failure at \(place): the server's certificate does not verify against the trusted CA (CERTIFICATE_VERIFY_FAILED); check --cloud-ca"
        }
        if text.contains("hostnameMismatch") || text.contains("unableToValidateCertificate") {
            return "TLS failure at \(place): the certificate does not name this host (\(text))"
        }
        if error is NIOSSLError || text.contains("handshakeFailed") || text.contains("BoringSSL") {
            return "TLS failure at \(place): \(text)"
        }
        if let client = error as? HTTPClientError {
            if client == .connectTimeout || client == .deadlineExceeded || client == .readTimeout {
                return "no answer from \(place) in time"
            }
            return "HTTPS to \(place) failed: \(client)"
        }
        if text.contains("connectionRefused") || text.contains("Connection refused") {
            return "connection refused by \(place)"
        }
        return "HTTPS to \(place) failed: \(text)"
    }
}
