/// An API call over MQTT, published to `rpc/req/<devId>` (PROTOCOL.md 9.4).
///
/// Follows `src/matop_service.c`, `matop_service_request_async`: plain JSON (not pv2.2) printed as
/// `{"id":<id>,"a":"<api>","t":<t>,"data":<data JSON>` then `,"v":"<version>"` when there is one,
/// then `}`; `id` counts up from 1 per link (`++id_cnt`, a 16-bit id in the SDK's message list);
/// QoS 0 (`matop_request_send`). The answer comes on `rpc/rsp/<devId>` (`RPCAnswer`), or not at
/// all: the SDK gives up after 8 s (`MATOP_TIMEOUT_MS_DEFAULT`), 10 s for `tuya.device.upgrade.get`.
public struct RPCRequest: Sendable, Equatable {
    public var id: UInt16
    public var api: String
    public var version: String?
    public var t: Int64
    /// The `data` member, JSON text (`{}` when the SDK passes none).
    public var data: String

    public init(id: UInt16, api: String, version: String?, t: Int64, data: String) {
        self.id = id
        self.api = api
        self.version = version
        self.t = t
        self.data = data
    }

    public static let defaultTimeoutMs: Int64 = 8_000

    /// The payload, byte for byte.
    public var text: String {
        #"{"id":\#(id),"a":""# + api + #"","t":\#(t),"data":"# + data + (version.map { #","v":""# + $0 + #"""# } ?? "") + "}"
    }

    public var payload: [UInt8] { Array(text.utf8) }

    /// The periodic upgrade check the SDK makes 1 s after the device link connects, then every 24 h
    /// (`src/tuya_iot.c`, `check_auto_upgrade_timeout_on` ->
    /// `matop_service_auto_upgrade_info_get`): `tuya.device.upgrade.silent.get` v4.4,
    /// `{"subId":null,"t":<t>}`.
    public static func upgradeCheck(id: UInt16, t: Int64) -> RPCRequest {
        RPCRequest(id: id, api: "tuya.device.upgrade.silent.get", version: "4.4", t: t, data: #"{"subId":null,"t":\#(t)}"#)
    }

    /// What `tuya_iot_reset` sends before it erases the activation (`matop_service_client_reset`):
    /// `tuya.device.reset` v4.0, `{"t":<t>}`.
    public static func reset(id: UInt16, t: Int64) -> RPCRequest {
        RPCRequest(id: id, api: "tuya.device.reset", version: "4.0", t: t, data: #"{"t":\#(t)}"#)
    }
}
