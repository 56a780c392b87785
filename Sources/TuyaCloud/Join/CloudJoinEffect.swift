/// What the runner must do after an input, in order (PROTOCOL.md 9).
public enum CloudJoinEffect: Sendable, Equatable {
    /// Make this HTTPS request and feed `.httpsAnswered` / `.httpsFailed` back with its id.
    case httpsRequest(HTTPSRequest)
    /// Open an MQTT 3.1.1 link over TLS (clean session, keepalive `keepAliveSeconds`), subscribe to
    /// the credentials' topics (QoS 1), then feed `.mqttConnected` (or a failure input) back. A link
    /// that is open is closed first.
    case mqttConnect(MQTTConnectRequest)
    /// Close the MQTT link (a clean DISCONNECT); no input comes back.
    case mqttDisconnect
    /// Publish on the open link (plain bytes: API calls over MQTT are not pv2.2).
    case mqttPublish(topic: String, payload: [UInt8], qos: UInt8)
    /// Write the state file (atomically).
    case storeState(CloudState)
    /// Delete the state file.
    case eraseState
    /// Show this pairing QR code (PROTOCOL.md 9.2) until `.hidePairing`.
    case showPairing(url: String)
    case hidePairing
    /// Feed `.timerFired(timer)` back at `at` (unix ms); arming replaces an armed timer.
    case armTimer(CloudJoinTimer, at: Int64)
    /// Forget `timer`; if it still fires, the machine ignores it.
    case cancelTimer(CloudJoinTimer)
    /// The device link is up: run the device (sections 3-8) on it with this identity. Once per
    /// connection of the device link.
    case joined(CloudDeviceIdentity)
    /// The device link went down: stop the device's use of it until the next `.joined`.
    case left(why: String)
    /// One log line: what happened, and when something is wrong, what the user should do.
    case log(CloudLogLevel, String)
}

public enum CloudLogLevel: String, Sendable, Equatable {
    case debug, info, warning, error
}

/// One MQTT link to open (`CloudJoinEffect.mqttConnect`).
public struct MQTTConnectRequest: Sendable, Equatable {
    public enum Link: String, Sendable, Equatable {
        /// Before activation: `acon_<uuid>`, waiting for the token (PROTOCOL.md 9.2).
        case direct
        /// After activation: the device's own link (PROTOCOL.md 9.4).
        case device
    }

    public var link: Link
    public var host: String
    public var port: Int
    /// The CA (DER) the TLS connection is pinned to.
    public var caDER: [UInt8]
    public var credentials: MQTTCredentials
    /// `MQTT_KEEPALIVE_INTERVALIN` (`include/tuya_config_defaults.h`).
    public var keepAliveSeconds: Int = 120
    /// `mqtt_client_connect` (`middleware/mqtt_client_wrapper.c`) always asks for a clean session.
    public var cleanSession: Bool = true
    /// The SDK's connect timeout: 5 s on the direct link (`MQTT_BIND_TIMEOUT_MS_DEFAULT`), 2 s on
    /// the device link (`MQTT_RECV_BLOCK_TIME_MS`).
    public var timeoutMs: Int64

    public init(link: Link, host: String, port: Int, caDER: [UInt8], credentials: MQTTCredentials) {
        self.link = link
        self.host = host
        self.port = port
        self.caDER = caDER
        self.credentials = credentials
        self.timeoutMs = link == .direct ? 5_000 : 2_000
    }

    public var clientId: String { credentials.clientId }
    public var username: String { credentials.username }
    public var password: String { credentials.password }
    public var subscriptions: [String] { credentials.subscriptions }
}
