import IPCWire

/// `tuya.device.info.sync` v1.0: what the device asks when the broker refused it with CONNACK 5
/// (PROTOCOL.md 9.4).
///
/// Follows `src/atop_service.c`, `atop_service_sync_check` (`{"t":<t>}`, signed with the secKey,
/// `devId` in the query; the answer's `result.status` is `reset_factory`, `reset` or `enable`), as
/// `src/tuya_iot.c`, `mqtt_client_unbind_on`, calls it before erasing the activation.
public enum InfoSync {
    public static let api = "tuya.device.info.sync"
    public static let version = "1.0"

    public enum Status: String, Sendable, Equatable {
        case resetFactory = "reset_factory"
        case reset
        case enable
    }

    public static func request(devId: String, secKey: String, t: Int64) -> ATOPRequest {
        ATOPRequest(api: api, version: version, uuid: nil, devId: devId, t: t, json: #"{"t":\#(t)}"#, key: secKey)
    }

    /// The status the answer names, or nil when it names none the SDK knows.
    public static func status(of answer: ATOPAnswer) -> Status? {
        guard answer.success, case .object(let o)? = answer.result, case .string(let s)? = o["status"] else { return nil }
        return Status(rawValue: s)
    }
}
