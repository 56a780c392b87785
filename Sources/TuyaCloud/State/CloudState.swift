/// What a device keeps across restarts once it has started joining the cloud (PROTOCOL.md 9): one
/// JSON file per device (`CloudStateStore`).
///
/// The SDK keeps the same facts as separate keys (`src/tuya_endpoint.c`: `region`, `regist_key`;
/// `src/tuya_iot.c`: the activation under the uuid, the schema under its id, `<uuid>.devid`,
/// `<uuid>.ver`). We keep them in one file, plus the last endpoints iotdns gave **[ours]** (the
/// SDK falls back to a built-in table of Tuya's hosts instead).
public struct CloudState: Sendable, Equatable, Codable {
    /// The file's format; a file of another format is treated as absent.
    public static let currentFormat = 1

    public var format: Int
    /// Whose state this is; a file for another uuid is treated as absent.
    public var uuid: String
    /// From the token (`region`, 2 characters), once known.
    public var region: String?
    /// From the token (`env`, the SDK's "regist key"), once known.
    public var env: String?
    /// The last endpoints iotdns answered.
    public var endpoints: CloudEndpoints?
    /// What activation returned; nil before activation and after an unbind.
    public var activation: ActivationResult?
    /// The devId of an earlier activation (kept after an unbind, sent with the next activation, as
    /// `run_state_reset` keeps `<uuid>.devid`).
    public var previousDevId: String?
    /// The versions text last accepted by `tuya.device.versions.update` (`<uuid>.ver`).
    public var syncedVersions: String?
    /// The skill last accepted by `tuya.device.skill.update` [ours].
    public var syncedSkill: String?

    public init(uuid: String, region: String? = nil, env: String? = nil, endpoints: CloudEndpoints? = nil,
                activation: ActivationResult? = nil, previousDevId: String? = nil, syncedVersions: String? = nil,
                syncedSkill: String? = nil) {
        self.format = Self.currentFormat
        self.uuid = uuid
        self.region = region
        self.env = env
        self.endpoints = endpoints
        self.activation = activation
        self.previousDevId = previousDevId
        self.syncedVersions = syncedVersions
        self.syncedSkill = syncedSkill
    }
}

/// What the device needs to run on the cloud once joined (`CloudJoinEffect.joined`).
public struct CloudDeviceIdentity: Sendable, Equatable {
    public var devId: String
    public var localKey: String
    public var secKey: String
    public var schemaId: String
    /// The schema text, and parsed (empty if it did not parse).
    public var schema: String
    public var dataPoints: [DPDefinition]
    public var stdTimeZone: String
    /// The broker and the CA its TLS is pinned to.
    public var mqttHost: String
    public var mqttPort: Int
    public var caDER: [UInt8]
    public var credentials: MQTTCredentials

    public init(activation: ActivationResult, endpoints: CloudEndpoints) {
        self.devId = activation.devId
        self.localKey = activation.localKey
        self.secKey = activation.secKey
        self.schemaId = activation.schemaId
        self.schema = activation.schema
        self.dataPoints = activation.dataPoints
        self.stdTimeZone = activation.stdTimeZone
        self.mqttHost = endpoints.mqttHost
        self.mqttPort = endpoints.mqttPort
        self.caDER = endpoints.caDER
        self.credentials = .deviceLink(devId: activation.devId, secKey: activation.secKey, localKey: activation.localKey)
    }
}
