/// The MQTT identity of one link to Tuya's broker (PROTOCOL.md 9.2 and 9.4).
///
/// Follows `src/mqtt_service.c`, `tuya_mqtt_signature_tool`: the password is the lower-case hex
/// (`%02x`) of bytes 4 to 11 of the MD5 of the whole key string (authkey before activation, secKey
/// after): 16 characters. Client id and username are the same string. The topics are what
/// `mqtt_client_connected_cb` (the `in` topic) and `matop_serice_init` (`rpc/rsp`, `rpc/file`)
/// subscribe to, all QoS 1.
public struct MQTTCredentials: Sendable, Equatable, Codable {
    public var clientId: String
    public var username: String
    public var password: String
    /// What to subscribe to once connected, QoS 1 each, in this order.
    public var subscriptions: [String]
    /// Where the device publishes its protocol messages; nil on the direct link (the SDK does not
    /// publish there: `topic_out` is empty).
    public var publishTopic: String?
    /// The AES key of the pv2.2 payloads on this link (authkey[0..15] or the localKey). Kept out of
    /// `description`s and logs.
    public var payloadKey: String

    public init(clientId: String, username: String, password: String, subscriptions: [String], publishTopic: String?, payloadKey: String) {
        self.clientId = clientId
        self.username = username
        self.password = password
        self.subscriptions = subscriptions
        self.publishTopic = publishTopic
        self.payloadKey = payloadKey
    }

    /// The password rule: hex of md5(key)[4..<12].
    public static func password(forKey key: String) -> String {
        TuyaCrypto.lowerHex(TuyaCrypto.md5(Array(key.utf8))[4..<12])
    }

    /// The direct link, before activation: `acon_<uuid>`, password from the authkey, subscribed to
    /// `d/ai/<uuid>` where the token (protocol 46) arrives sealed with authkey[0..15].
    public static func directLink(_ licence: TuyaLicence) -> MQTTCredentials {
        let id = "acon_" + licence.uuid
        return MQTTCredentials(clientId: id, username: id, password: password(forKey: licence.authkey),
                               subscriptions: ["d/ai/" + licence.uuid], publishTopic: nil,
                               payloadKey: String(decoding: Array(licence.authkey.utf8.prefix(16)), as: UTF8.self))
    }

    /// The device link, after activation: `devId`, password from the secKey, payloads sealed with the
    /// localKey.
    public static func deviceLink(devId: String, secKey: String, localKey: String) -> MQTTCredentials {
        MQTTCredentials(clientId: devId, username: devId, password: password(forKey: secKey),
                        subscriptions: ["smart/device/in/" + devId, "rpc/rsp/" + devId, "rpc/file/" + devId],
                        publishTopic: "smart/device/out/" + devId, payloadKey: localKey)
    }

    /// Where API calls over MQTT go (`matop_serice_init`: `rpc/req/<devId>`).
    public static func rpcRequestTopic(devId: String) -> String { "rpc/req/" + devId }
}
