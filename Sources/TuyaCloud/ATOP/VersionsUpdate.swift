/// `tuya.device.versions.update` v4.1 (PROTOCOL.md 9.3).
///
/// Follows `src/tuya_iot.c`, `tuya_iot_version_update_sync` (the versions text: a JSON array,
/// already escaped for a JSON string, `[{\"otaChannel\":0,\"protocolVer\":\"2.2\",\"baselineVer\":\"40.07\",\"softVer\":\"<v>\"}]`,
/// extension modules first when there are any), and `src/atop_service.c`,
/// `atop_service_version_update_v41` (`{"versions":"<text>","t":<t>}`, signed with the secKey,
/// `devId` in the query). The SDK sends it at every start unless the text equals the one it
/// stored after the last success (`<uuid>.ver`); a failure is ignored (`run_state_startup_update`
/// does not check it).
public enum VersionsUpdate {
    public static let api = "tuya.device.versions.update"
    public static let version = "4.1"

    /// The versions text as the SDK formats it. `modules` is a JSON array text (`[...]`) printed
    /// with its last character (`]`) replaced by `,` and the main firmware appended.
    public static func versionsText(softwareVersion: String, modules: String? = nil) -> String {
        var text: String
        if let modules, !modules.isEmpty {
            text = String(modules.dropLast()) + ","
        } else {
            text = "["
        }
        text += #"{\"otaChannel\":0,\"protocolVer\":\"\#(ActivationRequest.protocolVersion)\",\"baselineVer\":\"\#(ActivationRequest.baselineVersion)\",\"softVer\":\"\#(softwareVersion)\"}"#
        return text + "]"
    }

    public static func json(versionsText: String, t: Int64) -> String {
        #"{"versions":""# + versionsText + #"","t":\#(t)}"#
    }

    public static func request(devId: String, secKey: String, versionsText: String, t: Int64) -> ATOPRequest {
        ATOPRequest(api: api, version: version, uuid: nil, devId: devId, t: t, json: json(versionsText: versionsText, t: t), key: secKey)
    }
}
