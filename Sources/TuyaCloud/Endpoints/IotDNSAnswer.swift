import IPCWire

/// Reads the iotdns answer (PROTOCOL.md 9.1).
///
/// Follows `src/iotdns.c`, `iotdns_response_decode`: the top-level object must have `httpsSelfUrl`
/// and `mqttsSelfUrl`; `httpsSelfUrl.addr` is `https://<host><path>` (scanned with
/// `"https://%99[^/]%99[^\n]"`, port fixed at 443), `mqttsSelfUrl.addr` is `<host>:<port>`
/// (`"%99[^:]:%99d"`), and `caArr[0]` is the base64 of one DER certificate. Where the SDK would read
/// a NULL pointer (no `addr`, no `caArr`), this throws a typed error instead.
public enum IotDNSAnswer {
    /// The SDK reads the answer into a 6 KiB buffer (`response_buffer_length = 1024 * 6`); a larger
    /// answer cannot be what it accepts.
    public static let sizeLimit = 6 * 1024

    public static func parse(_ body: some Collection<UInt8>) throws(TuyaCloudError) -> CloudEndpoints {
        guard body.count <= sizeLimit else { throw .answerTooLarge(size: body.count, limit: sizeLimit) }
        let root: JSONValue
        do {
            root = try JSONValue.parse(body)
        } catch {
            throw .malformedAnswer("iotdns answer: \(error)")
        }
        guard case .object(let fields) = root else { throw .malformedAnswer("iotdns answer is not a JSON object") }
        guard let https = fields["httpsSelfUrl"] else { throw .missingField("httpsSelfUrl") }
        guard let mqtts = fields["mqttsSelfUrl"] else { throw .missingField("mqttsSelfUrl") }
        let httpsAddr = try addr(https, field: "httpsSelfUrl")
        let mqttsAddr = try addr(mqtts, field: "mqttsSelfUrl")
        guard let caArr = fields["caArr"] else { throw .missingField("caArr") }
        guard case .array(let cas) = caArr else { throw .wrongType(field: "caArr", expected: "an array") }
        guard let first = cas.first else { throw .missingField("caArr[0]") }
        guard case .string(let caText) = first else { throw .wrongType(field: "caArr[0]", expected: "a string") }

        let (atopHost, atopPath) = try splitHTTPS(httpsAddr)
        let (mqttHost, mqttPort) = try splitHostPort(mqttsAddr)
        guard let der = TuyaCrypto.base64Decode(caText), !der.isEmpty else { throw .badBase64(field: "caArr[0]") }
        return CloudEndpoints(atopHost: atopHost, atopPort: 443, atopPath: atopPath,
                              mqttHost: mqttHost, mqttPort: mqttPort, caDER: der)
    }

    private static func addr(_ value: JSONValue, field: String) throws(TuyaCloudError) -> String {
        guard case .object(let o) = value else { throw .wrongType(field: field, expected: "an object") }
        guard let a = o["addr"] else { throw .missingField(field + ".addr") }
        guard case .string(let s) = a else { throw .wrongType(field: field + ".addr", expected: "a string") }
        return s
    }

    /// `https://host/path` -> (host, path). The SDK's scan stops the host at the first `/` and
    /// holds at most 99 characters of each (its struct fields hold 64 and 16).
    static func splitHTTPS(_ addr: String) throws(TuyaCloudError) -> (String, String) {
        let prefix = "https://"
        guard addr.hasPrefix(prefix) else {
            throw .invalidValue(field: "httpsSelfUrl.addr", why: "'\(addr.prefix(80))' does not start with https://")
        }
        let rest = addr.dropFirst(prefix.count)
        let host = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(host.count).prefix { $0 != "\n" }
        guard !host.isEmpty, host.utf8.count <= 64, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
            throw .invalidValue(field: "httpsSelfUrl.addr", why: "no usable host in '\(addr.prefix(80))'")
        }
        return (String(host), path.isEmpty ? "/d.json" : String(path))
    }

    /// `host:port` -> (host, port), the port 1...65535.
    static func splitHostPort(_ addr: String) throws(TuyaCloudError) -> (String, Int) {
        let host = addr.prefix { $0 != ":" }
        let portText = addr.dropFirst(host.count + 1).prefix { $0.isASCII && $0.isNumber }
        guard !host.isEmpty, host.utf8.count <= 64, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw .invalidValue(field: "mqttsSelfUrl.addr", why: "no usable host in '\(addr.prefix(80))'")
        }
        guard addr.utf8.count > host.utf8.count, let port = Int(portText), (1...65535).contains(port) else {
            throw .invalidValue(field: "mqttsSelfUrl.addr", why: "no port 1-65535 in '\(addr.prefix(80))'")
        }
        return (String(host), port)
    }
}
