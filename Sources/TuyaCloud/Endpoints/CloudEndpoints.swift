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

    private enum CodingKeys: String, CodingKey {
        case atopHost, atopPort, atopPath, mqttHost, mqttPort, caDER
    }

    /// The CA is kept as base64 text in the state file.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        atopHost = try c.decode(String.self, forKey: .atopHost)
        atopPort = try c.decode(Int.self, forKey: .atopPort)
        atopPath = try c.decode(String.self, forKey: .atopPath)
        mqttHost = try c.decode(String.self, forKey: .mqttHost)
        mqttPort = try c.decode(Int.self, forKey: .mqttPort)
        let text = try c.decode(String.self, forKey: .caDER)
        guard let der = TuyaCrypto.base64Decode(text) else {
            throw DecodingError.dataCorruptedError(forKey: .caDER, in: c, debugDescription: "caDER is not base64")
        }
        caDER = der
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(atopHost, forKey: .atopHost)
        try c.encode(atopPort, forKey: .atopPort)
        try c.encode(atopPath, forKey: .atopPath)
        try c.encode(mqttHost, forKey: .mqttHost)
        try c.encode(mqttPort, forKey: .mqttPort)
        try c.encode(TuyaCrypto.base64Encode(caDER), forKey: .caDER)
    }
}
