/// Where the region endpoints are asked for (PROTOCOL.md 9.1): Tuya's iotdns service, or an
/// override (a private cloud, the local stand-in of the tests).
///
/// Follows `src/iotdns.c`, `iotdns_cloud_endpoint_get`: `POST https://h2.iot-dns.com:443/v2/url_config`,
/// TLS pinned to the certificate the SDK embeds (`iot_dns_cert_der`, a self-signed "HTTP DNS Server"
/// certificate). That certificate is not copied here: whoever runs against the live service supplies
/// it (`caDER`); without one the runner uses the system's trust store.
public struct IotDNSServer: Sendable, Equatable, Codable {
    public var host: String
    public var port: Int
    public var path: String
    /// The CA (DER) the TLS connection is pinned to; nil = the runner's default trust.
    public var caDER: [UInt8]?

    public init(host: String, port: Int = 443, path: String = "/v2/url_config", caDER: [UInt8]? = nil) {
        self.host = host
        self.port = port
        self.path = path
        self.caDER = caDER
    }

    /// Tuya's own service, as the SDK names it.
    public static let tuya = IotDNSServer(host: "h2.iot-dns.com")
}
