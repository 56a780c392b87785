/// The iotdns request body (PROTOCOL.md 9.1).
///
/// Follows `src/iotdns.c`, `iotdns_cloud_endpoint_get` and its two formats `IOTDNS_REQUEST_FMT` /
/// `IOTDNS_REQUEST_FMT_NOREGION`: JSON text (sent under a form Content-Type), asking for the HTTPS
/// ("atop") and MQTT addresses with their CA, then `region` when the device knows one, then `env`
/// (the "regist key", `pro` unless the token said otherwise). Callers: `tuya_endpoint_update_auto_region`
/// (no region: the pairing round) and `tuya_endpoint_update` (the stored region; note that the SDK
/// passes its stored region even when it is the empty string, giving `"region":""`).
public enum IotDNSRequest {
    /// The one header the SDK sends.
    public static let headers: [HTTPHeader] = [
        HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded;charset=UTF-8"),
    ]

    /// The exact body text. `region` nil leaves the key out (the no-region format).
    public static func body(region: String?, env: String) throws(TuyaCloudError) -> String {
        try TuyaLicence.checkPrintable(env, field: "env")
        let config = #"{"config":[{"key":"httpsSelfUrl","need_ca":true},{"key":"mqttsSelfUrl","need_ca":true}]"#
        guard let region else {
            return config + #","env":""# + env + #""}"#
        }
        if !region.isEmpty { try TuyaLicence.checkPrintable(region, field: "region") }
        return config + #","region":""# + region + #"","env":""# + env + #""}"#
    }

    /// The whole request for `server`.
    public static func request(id: UInt64, server: IotDNSServer, region: String?, env: String) throws(TuyaCloudError) -> HTTPSRequest {
        HTTPSRequest(id: id, purpose: .resolveEndpoints, host: server.host, port: server.port, pathAndQuery: server.path,
                     headers: headers, body: Array(try body(region: region, env: env).utf8), caDER: server.caDER,
                     answerLimit: IotDNSAnswer.sizeLimit)
    }
}
