import Foundation
import HTTPTransfer
import TuyaCloud

/// Carries out `CloudJoinEffect.httpsRequest` (PROTOCOL.md 9.1, 9.3) over the system's libcurl
/// (HTTPTransfer): TLS 1.2 or later, trusting only the request's CA (the one iotdns gave, or
/// `--cloud-ca` for iotdns) or, without one, the system's; headers and body byte for byte as the
/// machine built them; the answer read up to the request's limit. What comes back is the machine's input.
public struct CloudHTTPS: Sendable {
    /// The CA (DER) iotdns itself is pinned to when the machine's request names none (`--cloud-ca`).
    public var iotdnsCA: [UInt8]?

    /// No answer is read past this, whatever the request's limit.
    static let hardLimit = 1 << 20

    public init(iotdnsCA: [UInt8]? = nil) {
        self.iotdnsCA = iotdnsCA
    }

    public func perform(_ request: HTTPSRequest) async -> CloudJoinInput {
        var caPEM: String?
        if let der = request.caDER ?? (request.purpose == .resolveEndpoints ? iotdnsCA : nil) {
            guard let pem = Self.pem(der) else {
                return .httpsFailed(id: request.id, why: "the CA to trust is not a DER certificate")
            }
            caPEM = pem
        }
        let outgoing = HTTPTransferRequest(
            method: request.method, url: request.url, headers: request.headers.map { ($0.name, $0.value) },
            body: request.body, caPEM: caPEM, timeout: .milliseconds(max(1, request.timeoutMs)), tls12Minimum: true)
        do {
            // One byte past the limit is kept, so the machine sees the answer was too large.
            let answer = try await HTTPTransfer.perform(outgoing, bodyLimit: min(max(0, request.answerLimit), Self.hardLimit))
            return .httpsAnswered(id: request.id, status: answer.status, body: answer.body)
        } catch {
            return .httpsFailed(id: request.id, why: Self.describe(error, host: request.host, port: request.port))
        }
    }

    /// A DER certificate as PEM (what libcurl takes), after checking it is one DER SEQUENCE.
    static func pem(_ der: [UInt8]) -> String? {
        guard der.count >= 2, der[0] == 0x30 else { return nil }
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// One phrase a person can act on: TLS verification failures say so first.
    static func describe(_ error: HTTPTransferError, host: String, port: Int) -> String {
        let place = "\(host):\(port)"
        switch error.kind {
        case .certificateVerification:
            if error.message.contains("subject name") || error.message.contains("does not match") {
                return "TLS failure at \(place): the certificate does not name this host (\(error))"
            }
            return "TLS failure at \(place): the server's certificate does not verify against the trusted CA (CERTIFICATE_VERIFY_FAILED: \(error.message)); check --cloud-ca"
        case .tls:
            return "TLS failure at \(place): \(error)"
        case .timeout:
            return "no answer from \(place) in time"
        case .connectionRefused:
            return "connection refused by \(place)"
        case .cancelled, .other:
            return "HTTPS to \(place) failed: \(error)"
        }
    }
}
