import CallEngine
import Foundation
import Synchronization
import IPCWire

/// One thing that happened during a run, on one device's timeline.
public struct Observation: Sendable {
    public enum Kind: Sendable {
        /// A 308 event, as the device sent or received it (PROTOCOL.md 3).
        case message(CallMessage, MessageDirection)
        /// The device ended a call.
        case deviceEnded(CallRecord)
        /// A simulated app user's call ended (with its SDK error).
        case appEnded(user: String, CallRecord)
        /// The device refused a P2P offer with `disconnect` close_reason 1.
        case offerRefused(session: String, from: String, why: String)
        case connection(up: Bool, detail: String)
        /// A scenario action (press, answer, a fault, ...) was carried out.
        case action(String)
        /// A message was dropped or an action refused.
        case refused(String)
        /// Video frames so far on a session's link and the rate over the last interval;
        /// `user` nil: sent by the device, else decoded by that app user.
        case video(session: String, user: String?, frames: Int, fps: Double)
        /// A doorbell event of PROTOCOL.md 8 (43, `video_doorbell`, DPs, sleep and wake, media).
        case doorbell(DoorbellObservation)
    }

    public var time: Date
    public var device: String
    /// The call session it belongs to, when it has one.
    public var session: String?
    public var kind: Kind
}

/// The run's record: every observation per device, and which call is each device's current one.
final class Timeline: Sendable {
    private struct State {
        var items: [Observation] = []
        /// Per device: the current call's session and when it started.
        var current: [String: (session: String, start: Date)] = [:]
        var known: Set<String> = []

        mutating func begin(_ device: String, _ session: String, at time: Date) {
            let key = device + "\u{0}" + session
            if known.contains(key) {
                if let c = current[device], c.session == session, time < c.start { current[device] = (session, time) }
                return
            }
            known.insert(key)
            current[device] = (session, time)
        }
    }

    private let state = Mutex(State())
    /// The run's clock: an observation's time, and who waits on changes (the waits re-check at each).
    let clock: any ScenarioClock

    init(clock: any ScenarioClock) { self.clock = clock }

    /// Records an observation (now, unless `time` says when) and wakes whoever waits on a change.
    func record(_ device: String, session: String? = nil, _ kind: Observation.Kind, at time: Date? = nil) {
        let time = time ?? clock.now
        state.withLock { s in
            s.items.append(Observation(time: time, device: device, session: session, kind: kind))
            if case .message(let m, _) = kind, m.event == .call {
                s.begin(device, m.sessionId, at: time)
            }
        }
        clock.changed()
    }

    /// A call began (a press, an app's call, or the first `call` seen for a new session).
    func beginCall(_ device: String, session: String, at time: Date) {
        state.withLock { $0.begin(device, session, at: time) }
    }

    func currentCall(_ device: String) -> (session: String, start: Date)? {
        state.withLock { $0.current[device] }
    }

    var all: [Observation] { state.withLock { $0.items } }

    /// The device's observations (of `session`, when given).
    func of(_ device: String, session: String?) -> [Observation] {
        all.filter { $0.device == device && (session == nil || $0.session == session) }
    }
}

extension Observation {
    var message: (CallMessage, MessageDirection)? {
        if case .message(let m, let d) = kind { (m, d) } else { nil }
    }

    /// `-> ring to user-alice`, `<- answer from user-alice`.
    var shortText: String {
        switch kind {
        case .message(let m, let d):
            var s = d == .sent ? "-> \(m.event.rawValue) to \(m.targetId)" : "<- \(m.event.rawValue) from \(m.curId)"
            if let r = m.reason { s += " (\(r))" }
            return s
        case .deviceEnded(let r):
            return "call ended \(r.outcome.rawValue)" + (r.reason.map { " (\($0.rawValue))" } ?? "")
        case .appEnded(let u, let r):
            return "\(u): call ended \(r.outcome.rawValue)" + (r.sdkError.map { " SDK \($0.rawValue)" } ?? "")
        case .offerRefused(_, let from, let why): return "offer from \(from) refused: \(why)"
        case .connection(let up, let detail): return up ? "MQTT connected" : "MQTT down (\(detail))"
        case .action(let a): return a
        case .refused(let why): return "refused: \(why)"
        case .video(_, let user, let frames, let fps):
            return "\(user ?? "device"): \(frames) frames, \(String(format: "%.1f", fps)) fps"
        case .doorbell(let d): return d.shortText
        }
    }
}
