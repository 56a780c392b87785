import CallEngine
import Foundation
import IPCWire

/// The string values of the media data points (PROTOCOL.md 8.3 and 8.5): base64 of a JSON object
/// naming files by their control-API path. The device glue turns them into `DPValue.string`.
/// JSON is encoded with sorted keys and unescaped slashes (order carries no meaning; a fixed one
/// keeps reports comparable).
public enum DoorbellMediaDPs {
    /// DP 154 `doorbell_pic` (the press snapshot) and DP 115 `movement_detect_pic` (a motion
    /// snapshot): base64 of `{"v":"3.0","bucket":"local","files":[["<path>",""]]}`.
    public static func snapshotReference(path: String) -> String {
        encoded(SnapshotReference(v: "3.0", bucket: "local", files: [[path, ""]]))
    }

    public static func snapshotReference(_ media: MediaRef) -> String { snapshotReference(path: media.path) }

    /// DP 185 `alarm_message` at a press: base64 of
    /// `{"cmd":"ipc_doorbell","type":"image","files":[{"data":"<path>","keyId":"default","iv":""}]}`.
    public static func doorbellAlarm(path: String) -> String {
        encoded(AlarmMessage(cmd: DPAlert.Command.doorbell.rawValue, type: DPAlert.MediaType.image.rawValue,
                             files: [.init(data: path, keyId: "default", iv: "")]))
    }

    public static func doorbellAlarm(_ snapshot: MediaRef) -> String { doorbellAlarm(path: snapshot.path) }

    /// DP 212 `initiative_message`: base64 of `{"cmd":...,"type":...,"files":["<path>"],"t":<unix s>}`
    /// with `"duration"` (whole seconds) for a message. Built by `DPAlert` (the one writer of DP 212,
    /// which the power machine's low-battery alert uses too).
    public static func initiativeMessage(cmd: DPAlert.Command, type: DPAlert.MediaType, files: [String], t: Int64,
                                         duration: Int? = nil) -> String {
        let extra: [String: JSONValue] = duration.map { ["duration": .int(Int64($0))] } ?? [:]
        guard case .string(let text) = DPAlert.initiative(cmd: cmd, type: type, files: files, t: t, extra: extra) else { return "" }
        return text
    }

    /// DP 212 after a ring timeout (8.5): `ipc_doorbell`, the press snapshot (none when it could not
    /// be taken: `"type":"none"`, no files).
    public static func doorbellTimeout(snapshot: MediaRef?, t: Int64) -> String {
        guard let snapshot else { return initiativeMessage(cmd: .doorbell, type: .none, files: [], t: t) }
        return initiativeMessage(cmd: .doorbell, type: .image, files: [snapshot.path], t: t)
    }

    /// DP 212 once a left message is written (8.5): `ipc_leave_msg`, `video`, its path and duration.
    public static func leftMessage(_ message: MediaRef, t: Int64) -> String {
        initiativeMessage(cmd: .leaveMessage, type: .video, files: [message.path], t: t, duration: message.durationSeconds ?? 0)
    }

    /// DP 212 for a motion event: `ipc_motion` with its snapshot.
    public static func motion(snapshot: MediaRef?, t: Int64) -> String {
        guard let snapshot else { return initiativeMessage(cmd: .motion, type: .none, files: [], t: t) }
        return initiativeMessage(cmd: .motion, type: .image, files: [snapshot.path], t: t)
    }

    // MARK: Wire shapes (Codable: both ends of a test decode the same types)

    public struct SnapshotReference: Codable, Sendable, Equatable {
        public var v: String
        public var bucket: String
        /// Pairs of path and key ("" for a local, unencrypted file).
        public var files: [[String]]
    }

    public struct AlarmMessage: Codable, Sendable, Equatable {
        public struct File: Codable, Sendable, Equatable {
            public var data: String
            public var keyId: String
            public var iv: String
        }
        public var cmd: String
        public var type: String
        public var files: [File]
    }

    public struct InitiativeMessage: Codable, Sendable, Equatable {
        public var cmd: String
        public var type: String
        public var files: [String]
        public var t: Int64
        /// Whole seconds; messages only (absent otherwise).
        public var duration: Int?
    }

    /// Decodes a DP string built here (for tests and the app simulator): base64, then JSON.
    public static func decode<T: Decodable>(_ type: T.Type, from value: String) -> T? {
        guard let data = Data(base64Encoded: value) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    private static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs of strings and integers cannot fail; an empty object would
        // still be valid base64 JSON if it ever did.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return data.base64EncodedString()
    }
}
