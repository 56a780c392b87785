/// The activation call, `tuya.device.active` v4.4 (PROTOCOL.md 9.3).
///
/// Follows `src/atop_service.c`, `atop_service_activate_request`, which prints the JSON with
/// `sprintf`, field by field: `token`, `softVer`, `productKey`, `protocolVer` (`PV_VERSION` "2.2"),
/// `baselineVer` (`BS_VERSION` "40.07", `include/tuya_iot.h`), then `options` as a string holding
/// escaped JSON and written after `": "` (a space after the colon, as the SDK's format has it),
/// then the optional `productKeyStr` (firmware key), `devId` (the id of an earlier activation,
/// kept by `run_state_reset` under `<uuid>.devid`), `modules`, `feature`, `skillParam`, then
/// `devAttribute` (`1 << ATTRIBUTE_OTA` = 2048, `%u`), `cadVer` "1.0.3", `cdVer` "1.0.0" and `t`
/// (`%d`, the same `t` as the query). Signed and encrypted with the authkey; `uuid` in the query.
public struct ActivationRequest: Sendable, Equatable {
    public static let api = "tuya.device.active"
    public static let version = "4.4"
    /// `PV_VERSION`.
    public static let protocolVersion = "2.2"
    /// `BS_VERSION`.
    public static let baselineVersion = "40.07"
    public static let cadVersion = "1.0.3"
    public static let cdVersion = "1.0.0"
    /// `1 << ATTRIBUTE_OTA`: the device supports OTA.
    public static let deviceAttributes: UInt32 = 1 << 11

    public var licence: TuyaLicence
    public var token: String
    /// `softVer` (the SDK holds at most 10 characters, `MAX_LENGTH_SW_VER`).
    public var softwareVersion: String
    public var t: Int64
    /// The devId of an earlier activation of this uuid, if the state kept one.
    public var previousDevId: String?
    /// `firmware_key` (`productKeyStr`, and `isFK` true in `options`).
    public var firmwareKey: String?
    /// Extension modules' versions (`modules`), printed as given.
    public var modules: String?
    /// The skill JSON (PROTOCOL.md 8.7), unescaped: it is escaped here, as the SDK's caller must
    /// pass it (the SDK prints `skill_param` as is inside quotes).
    public var skill: String?

    public init(licence: TuyaLicence, token: String, softwareVersion: String, t: Int64, previousDevId: String? = nil,
                firmwareKey: String? = nil, modules: String? = nil, skill: String? = nil) {
        self.licence = licence
        self.token = token
        self.softwareVersion = softwareVersion
        self.t = t
        self.previousDevId = previousDevId
        self.firmwareKey = firmwareKey
        self.modules = modules
        self.skill = skill
    }

    /// The JSON text, byte for byte as the SDK prints it.
    public var json: String {
        let hasFirmwareKey = !(firmwareKey ?? "").isEmpty
        var text = #"{"token":""# + token + #"","softVer":""# + softwareVersion + #"","productKey":""# + licence.productKey
            + #"","protocolVer":""# + Self.protocolVersion + #"","baselineVer":""# + Self.baselineVersion + #"""#
        text += #","options": "{\"isFK\":"# + (hasFirmwareKey ? "true" : "false") + #"}""#
        if hasFirmwareKey, let firmwareKey { text += #","productKeyStr":""# + firmwareKey + #"""# }
        if let previousDevId, !previousDevId.isEmpty { text += #","devId":""# + previousDevId + #"""# }
        if let modules, !modules.isEmpty { text += #","modules":""# + modules + #"""# }
        if let skill, !skill.isEmpty { text += #","skillParam":""# + Self.escaped(skill) + #"""# }
        text += #","devAttribute":\#(Self.deviceAttributes)"#
        text += #","cadVer":""# + Self.cadVersion + #"","cdVer":""# + Self.cdVersion + #"","t":\#(t)}"#
        return text
    }

    /// The signed request: `uuid` in the query, the authkey as key.
    public var request: ATOPRequest {
        ATOPRequest(api: Self.api, version: Self.version, uuid: licence.uuid, devId: nil, t: t, json: json, key: licence.authkey)
    }

    /// JSON text inside a JSON string: `\` and `"` escaped, control characters as `\uXXXX`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
