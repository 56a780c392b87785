import CallEngine
import IPCWire

/// The doorbell steps of PROTOCOL.md 8 (docs/scenarios.md, "Doorbells"): what an app user or the
/// device does beside the §3 vocabulary. A `press` of a doorbell kind announces a call over 43 and
/// the call id becomes the device's current call, as a §3 press's session does.
public enum DoorbellAction: Sendable, Equatable {
    /// `accept: USER`: the app user accepts the doorbell call that rings (8.2).
    case accept(user: String)
    /// `decline: USER`: the app user sends `stop` before an accept (8.2).
    case decline(user: String)
    /// `wake: USER` (the wake topic, CRC32 of the localKey), `wake: {user: U, by: dp}` (protocol 5
    /// DP 149 true) or `wake: device` (as the control API) (8.4).
    case wake(WakeMethod)
    /// `leaveMessage: {within: S}`: a press inside the message window after a ring timeout; holds
    /// once DP 212 `ipc_leave_msg` is reported (8.5).
    case leaveMessage(within: Double)
    /// `motion`: a motion event (8.5).
    case motion
    /// `battery: N`: DP 145 set to N percent (8.4).
    case battery(percent: Int)
    /// `dps: {ID: VALUE}`: the device changes its own DPs (8.3).
    case setDataPoints([DPId: DPValue])

    public var summary: String {
        switch self {
        case .accept(let u): "\(u) accepts the doorbell call"
        case .decline(let u): "\(u) declines the doorbell call"
        case .wake(.topic(let u)): "\(u) wakes the device (wake topic)"
        case .wake(.dataPoint(let u)): "\(u) wakes the device (DP 149)"
        case .wake(.device): "the device is woken"
        case .leaveMessage(let s): "a visitor leaves a message (DP 212 ipc_leave_msg within \(formatNumber(s)) s)"
        case .motion: "motion"
        case .battery(let p): "battery \(p) %"
        case .setDataPoints(let dps):
            "device sets DPs " + dps.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        }
    }

    /// The app user the action needs, if any.
    var user: String? {
        switch self {
        case .accept(let u), .decline(let u), .wake(.topic(let u)), .wake(.dataPoint(let u)): u
        default: nil
        }
    }
}

/// How a `wake` step wakes the device (PROTOCOL.md 8.4).
public enum WakeMethod: Sendable, Equatable {
    /// The app publishes the CRC32 of the localKey on `m/w/{devId}`.
    case topic(user: String)
    /// The app sets DP 149 to true with protocol 5.
    case dataPoint(user: String)
    /// The device's own wake (as the control API's `POST .../wake`).
    case device
}

/// The doorbell conditions of PROTOCOL.md 8, checked on the device's events as they come.
public enum DoorbellCondition: Sendable, Equatable {
    /// `sent: 43`: the device announced the current call over protocol 43 (8.1).
    case pressSent
    /// `sent:`/`received:` a `video_doorbell` event of the current call (8.2), to/from a user.
    case message(DoorbellEvent, MessageDirection, peer: String?, reason: String?)
    /// `dp: ID` (`equals: V`, `alert: CMD`): the device's DP has that value now (8.3); `alert`
    /// decodes DP 212's base64 JSON and checks its `cmd`.
    case dataPoint(DPId, equals: DPValue?, alert: String?)
    /// `power: awake|asleep|waking` (8.4).
    case power(String)
    /// `noEvent: EVENT` for a doorbell device: no such `video_doorbell` event in the current call.
    case noMessage(DoorbellEvent, MessageDirection?)

    public var summary: String {
        switch self {
        case .pressSent: "device sends 43 (press)"
        case .message(let e, let dir, let peer, let reason):
            (dir == .sent ? "device sends video_doorbell \(e.rawValue)" : "device receives video_doorbell \(e.rawValue)")
                + (peer.map { dir == .sent ? " to \($0)" : " from \($0)" } ?? "") + (reason.map { " (reason \($0))" } ?? "")
        case .dataPoint(let id, let v, let alert):
            "DP \(id)" + (v.map { " == \($0)" } ?? "") + (alert.map { " alert \($0)" } ?? "")
        case .power(let p): "device \(p)"
        case .noMessage(let e, let dir):
            "no video_doorbell \(e.rawValue)" + (dir.map { $0 == .sent ? " sent" : " received" } ?? "") + " in the call"
        }
    }

    var defaultWait: Double {
        if case .noMessage = self { return 0 }
        return 10
    }
}

/// A doorbell event of PROTOCOL.md 8 on a device's timeline.
public enum DoorbellObservation: Sendable {
    /// A 43 announced call `callId` (8.1).
    case pressed(callId: String)
    /// A `video_doorbell` message sent or received (8.2).
    case message(VideoDoorbellMessage, MessageDirection)
    /// A protocol 4 report (8.3).
    case dataPoints([DPEntry])
    case asleep
    case awake(latencyMs: Int64)
    /// A snapshot or left message stored (8.5).
    case media(name: String, path: String)

    var shortText: String {
        switch self {
        case .pressed: "-> 43 press"
        case .message(let m, let d):
            (d == .sent ? "-> video_doorbell \(m.event.rawValue)" + (m.uid.map { " to \($0)" } ?? "")
                : "<- video_doorbell \(m.event.rawValue)" + (m.uid.map { " from \($0)" } ?? ""))
                + (m.reason.map { " (\($0))" } ?? "")
        case .dataPoints(let dps): "-> 4 DPs " + dps.map { "\($0.id)" }.joined(separator: ",")
        case .asleep: "asleep"
        case .awake(let ms): "awake after \(ms) ms"
        case .media(let name, _): "stored \(name)"
        }
    }
}
