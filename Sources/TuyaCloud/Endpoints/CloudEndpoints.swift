/// What iotdns answers (PROTOCOL.md 9.1): the HTTPS API ("atop") address, the MQTT address, and the
/// CA both are pinned to. The SDK keeps this as `tuya_endpoint_t` (`include/tuya_endpoint.h`).
public struct CloudEndpoints: Sendable, Equatable, Codable {
    /// The atop host (from `httpsSelfUrl.addr`, `https://<host><path>`).
    public var atopHost: String
    /// The SDK always uses 443 for the atop link (`iotdns_response_decode`: `port = 443`).
    public var atopPort: Int
    /// The path part of `httpsSelfUrl.addr` (often `/d.json`); the SDK's requests use the fixed path
    /// `/d.json` whatever this says (`atop_service.c`), and so does `ATOPRequest`.
    public var atopPath: String
    public var mqttHost: String
    public var mqttPort: Int
    /// `caArr[0]`, decoded: the CA (DER) of both links.
    public var caDER: [UInt8]

    public init(atopHost: String, atopPort: Int = 443, atopPath: String, mqttHost: String, mqttPort: Int, caDER: [UInt8]) {
        self.atopHost = atopHost
        self.atopPort = atopPort
        self.atopPath = atopPath
        self.mqttHost = mqttHost
        self.mqttPort = mqttPort
        self.caDER = caDER
    }
}
