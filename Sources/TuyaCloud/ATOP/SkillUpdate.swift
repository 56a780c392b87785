/// `tuya.device.skill.update` (PROTOCOL.md 9.3 and 8.7) **[ours: not in the SDK]**.
///
/// The official MQTT device SDK has no such call: it sends the skill once, inside the activation
/// JSON (`skillParam`, `src/atop_service.c`, `atop_service_activate_request`). PROTOCOL.md 9.3 asks
/// an IPC to upload it separately as well; the shape here is decided by us, on the SDK's ATOP
/// conventions: v1.0, `{"devId":"<devId>","skill":"<skill JSON, escaped>","t":<t>}`, signed with
/// the secKey, `devId` in the query. Untried against the live cloud.
public enum SkillUpdate {
    public static let api = "tuya.device.skill.update"
    public static let version = "1.0"

    public static func json(devId: String, skill: String, t: Int64) -> String {
        #"{"devId":""# + devId + #"","skill":""# + ActivationRequest.escaped(skill) + #"","t":\#(t)}"#
    }

    public static func request(devId: String, secKey: String, skill: String, t: Int64) -> ATOPRequest {
        ATOPRequest(api: api, version: version, uuid: nil, devId: devId, t: t, json: json(devId: devId, skill: skill, t: t), key: secKey)
    }
}
