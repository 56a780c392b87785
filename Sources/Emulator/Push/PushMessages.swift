import Foundation

/// One press to push (PROTOCOL.md 8.8): what every household user's push names.
public struct PushPress: Sendable, Equatable {
    public var devId: String
    /// The call id of the press (`edata` of the 43, 8.1): the push's `msgid`.
    public var callId: String
    /// The profile's doorbell kind (`ac_doorbell`, `doorbell`): the push's `etype`.
    public var kind: String
    /// When the doorbell was pressed, unix milliseconds.
    public var timestampMs: Int64
    /// The device's name, for the notification's title (the devId when absent).
    public var deviceName: String?

    public init(devId: String, callId: String, kind: String, timestampMs: Int64, deviceName: String? = nil) {
        self.devId = devId
        self.callId = callId
        self.kind = kind
        self.timestampMs = timestampMs
        self.deviceName = deviceName
    }
}

/// The JSON object POSTed to `push.url`, one per household user (PROTOCOL.md 8.8; the fields of
/// the app SDK's camera push bean).
public struct PushMessage: Codable, Sendable, Equatable {
    public var uid: String
    public var devid: String
    public var msgid: String
    public var etype: String
    /// Unix milliseconds of the press.
    public var timestamp: Int64

    public init(uid: String, devid: String, msgid: String, etype: String, timestamp: Int64) {
        self.uid = uid
        self.devid = devid
        self.msgid = msgid
        self.etype = etype
        self.timestamp = timestamp
    }

    public init(press: PushPress, uid: String) {
        self.init(uid: uid, devid: press.devId, msgid: press.callId, etype: press.kind, timestamp: press.timestampMs)
    }
}

/// One `<msgid>-<uid>.apns` file (PROTOCOL.md 8.8): the payload `xcrun simctl push` and the iOS
/// simulator's drag-and-drop take. A JSON object with `aps` (here an `alert` with `title` and
/// `body`, and the default `sound`), the top-level `Simulator Target Bundle` naming the app to
/// deliver to (so `xcrun simctl push booted <file>` needs no bundle argument), and the push's own
/// fields at the top level beside them, as APNs delivers custom keys to the app.
public struct APNsPayload: Codable, Sendable, Equatable {
    public struct APS: Codable, Sendable, Equatable {
        public struct Alert: Codable, Sendable, Equatable {
            public var title: String
            public var body: String
        }
        public var alert: Alert
        public var sound: String?
    }

    public var simulatorTargetBundle: String
    public var aps: APS
    public var uid: String
    public var devid: String
    public var msgid: String
    public var etype: String
    public var timestamp: Int64

    enum CodingKeys: String, CodingKey {
        case simulatorTargetBundle = "Simulator Target Bundle"
        case aps, uid, devid, msgid, etype, timestamp
    }

    public init(press: PushPress, uid: String, bundle: String) {
        simulatorTargetBundle = bundle
        let name = press.deviceName ?? press.devId
        aps = APS(alert: .init(title: name, body: "Someone is at the door (\(press.kind))"), sound: "default")
        self.uid = uid
        devid = press.devId
        msgid = press.callId
        etype = press.kind
        timestamp = press.timestampMs
    }

    /// The file's name: `<msgid>-<uid>.apns`, with characters that cannot be in a file name
    /// (`/`, a leading `.`, control characters) replaced by `_`.
    public static func fileName(msgid: String, uid: String) -> String {
        let raw = "\(msgid)-\(uid)"
        var name = String(raw.map { c -> Character in
            c == "/" || c == "\\" || c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) ? "_" : c
        })
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        return String(name.prefix(200)) + ".apns"
    }
}

/// Counts of one press's pushes.
public struct PushOutcome: Sendable, Equatable {
    /// POSTs answered with a 2xx status.
    public var sent = 0
    /// POSTs that failed: no connection, a timeout, or a status other than 2xx.
    public var failed = 0
    /// Pushes dropped by the push-loss fault (neither POSTed nor written).
    public var lost = 0
    /// `.apns` files written.
    public var filesWritten = 0
    /// `.apns` files that could not be written.
    public var fileFailures = 0

    public init(sent: Int = 0, failed: Int = 0, lost: Int = 0, filesWritten: Int = 0, fileFailures: Int = 0) {
        self.sent = sent
        self.failed = failed
        self.lost = lost
        self.filesWritten = filesWritten
        self.fileFailures = fileFailures
    }
}

/// The push faults the control API sets at run time (PROTOCOL.md 8.8).
public struct PushFaults: Sendable, Equatable {
    /// Each press's pushes go out this many seconds late (0-600).
    public var delaySeconds: Double
    /// The share of pushes (per user) dropped, 0-1.
    public var lossShare: Double

    public init(delaySeconds: Double = 0, lossShare: Double = 0) {
        self.delaySeconds = delaySeconds
        self.lossShare = lossShare
    }

    public static let maximumDelaySeconds: Double = 600

    /// Throws `PushFaultError` naming the field out of range.
    public func validate() throws(PushFaultError) {
        guard delaySeconds.isFinite, (0...Self.maximumDelaySeconds).contains(delaySeconds) else {
            throw .outOfRange(field: "delaySeconds", "push delay must be 0 to \(Int(Self.maximumDelaySeconds)) seconds, got \(delaySeconds)")
        }
        guard lossShare.isFinite, (0...1).contains(lossShare) else {
            throw .outOfRange(field: "lossShare", "push loss must be a share 0 to 1, got \(lossShare)")
        }
    }
}

public enum PushFaultError: Error, Sendable, Equatable, CustomStringConvertible {
    case outOfRange(field: String, String)

    public var field: String {
        switch self { case .outOfRange(let field, _): return field }
    }

    public var description: String {
        switch self { case .outOfRange(_, let why): return why }
    }
}
