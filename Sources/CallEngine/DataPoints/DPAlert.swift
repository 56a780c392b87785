import Foundation
import IPCWire

/// Values of the "raw" DPs (PROTOCOL.md 8.3): base64 of a JSON object, keys sorted.
public enum DPAlert {
    /// DP 212 `initiative_message` (8.3): `{"cmd":..,"type":..,"files":[..],"t":..}` plus `extra`
    /// members (`duration` for `ipc_leave_msg`).
    public static func initiative(cmd: Command, type: MediaType, files: [String], t: Int64,
                                  extra: [String: JSONValue] = [:]) -> DPValue {
        var object = extra
        object["cmd"] = .string(cmd.rawValue)
        object["type"] = .string(type.rawValue)
        object["files"] = .array(files.map { .string($0) })
        object["t"] = .int(t)
        return base64(.object(object))
    }

    /// DP 212 `ipc_low_battery` (8.4): no file.
    public static func lowBattery(t: Int64) -> DPValue {
        initiative(cmd: .lowBattery, type: .none, files: [], t: t)
    }

    /// `.string` of base64 of the JSON's compact, key-sorted text.
    public static func base64(_ json: JSONValue) -> DPValue {
        .string(Data(json.serialized()).base64EncodedString())
    }

    /// The JSON object a raw DP value holds; nil for `""`, text that is not base64, or JSON that
    /// is not an object.
    public static func decode(_ value: DPValue) -> JSONValue? {
        guard case .string(let text) = value, !text.isEmpty, let data = Data(base64Encoded: text),
              let json = try? JSONValue.parse(data), case .object = json
        else { return nil }
        return json
    }

    /// DP 212's `cmd`.
    public enum Command: String, Sendable, CaseIterable {
        case motion = "ipc_motion"
        case doorbell = "ipc_doorbell"
        case leaveMessage = "ipc_leave_msg"
        case lowBattery = "ipc_low_battery"
    }

    /// DP 212's `type`.
    public enum MediaType: String, Sendable, CaseIterable {
        case image
        case video
        case none
    }
}
