/// What a join machine is made with (PROTOCOL.md 9).
public struct CloudJoinConfig: Sendable, Equatable {
    public var licence: TuyaLicence
    /// `softVer` (the SDK's `software_ver`, up to 10 characters).
    public var softwareVersion: String
    /// Where region endpoints are asked for: Tuya's iotdns, or an override (PROTOCOL.md 9.1).
    public var iotdns: IotDNSServer
    /// The `env` (regist key) used before a token names one: `pro`, as `tuya_endpoint_init` defaults.
    public var defaultEnv: String
    /// The skill JSON (PROTOCOL.md 8.7), sent in the activation as `skillParam` and, when
    /// `uploadSkill`, with `tuya.device.skill.update` after it.
    public var skill: String?
    public var uploadSkill: Bool
    /// Extension modules' versions text (the SDK's `modules`), or nil.
    public var modules: String?
    /// Seed of the backoff jitter (the SDK draws it from `system_random`): fixed in tests.
    public var jitterSeed: UInt64

    public init(licence: TuyaLicence, softwareVersion: String, iotdns: IotDNSServer = .tuya, defaultEnv: String = "pro",
                skill: String? = nil, uploadSkill: Bool = true, modules: String? = nil, jitterSeed: UInt64 = 0x5EED) {
        self.licence = licence
        self.softwareVersion = softwareVersion
        self.iotdns = iotdns
        self.defaultEnv = defaultEnv
        self.skill = skill
        self.uploadSkill = uploadSkill
        self.modules = modules
        self.jitterSeed = jitterSeed
    }
}
