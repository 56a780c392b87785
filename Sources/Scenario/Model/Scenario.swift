import CallEngine
import DeviceProfile
import Foundation
import IPCWire

/// One scenario file (docs/scenarios.md): the devices, the simulated app users, and the steps.
public struct Scenario: Sendable, Equatable {
    public var name: String
    public var description: String?
    /// The file as given (for messages and the report).
    public var file: String
    /// Seed of the random timings (uniform, exponential); nil: a fresh one per run.
    public var seed: UInt64?
    public var devices: DeviceSetup
    /// The app users the simulator plays (`--app simulated`); ignored with `--app external`.
    public var apps: [AppSetup]
    public var steps: [Step]

    public init(name: String, description: String? = nil, file: String, seed: UInt64? = nil,
                devices: DeviceSetup, apps: [AppSetup], steps: [Step]) {
        self.name = name
        self.description = description
        self.file = file
        self.seed = seed
        self.devices = devices
        self.apps = apps
        self.steps = steps
    }

    /// Every step, blocks opened, in file order.
    public var allSteps: [Step] {
        var out: [Step] = []
        func walk(_ steps: [Step]) {
            for s in steps {
                out.append(s)
                if case .repeatBlock(_, let inner) = s.kind { walk(inner) }
            }
        }
        walk(steps)
        return out
    }

    /// True when a step needs the simulated app (an app user acts, or an app-side measure).
    public var needsSimulatedApp: Bool { allSteps.contains { $0.kind.needsSimulatedApp } }
}

/// The devices of a scenario: `count` instances of one profile (a fleet template when count > 1),
/// with the scenario's changes applied.
public struct DeviceSetup: Sendable, Equatable {
    /// The profile as loaded (path resolved against the scenario file).
    public var profile: DeviceProfile
    public var profilePath: String
    public var count: Int
    /// The household with `{index}` unresolved (it is resolved per device).
    public var householdTemplate: [String]?

    public init(profile: DeviceProfile, profilePath: String, count: Int, householdTemplate: [String]? = nil) {
        self.profile = profile
        self.profilePath = profilePath
        self.count = count
        self.householdTemplate = householdTemplate
    }
}

/// One simulated app user; `{index}` in `user` makes one per device.
public struct AppSetup: Sendable, Equatable {
    public var user: String
    /// What the user does with a call from a device (a doorbell press).
    public var answer: AnswerPolicy
    public var heartbeatInterval: Double
    public var heartbeatTimeout: Double

    public init(user: String, answer: AnswerPolicy = .manual, heartbeatInterval: Double = 10, heartbeatTimeout: Double = 30) {
        self.user = user
        self.answer = answer
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
    }

    public var isPerDevice: Bool { user.contains("{index") }
}

/// One step of a scenario and its modifiers.
public struct Step: Sendable, Equatable {
    /// `3` for the third top-level step, `4.2` for the second step inside step 4's block.
    public var label: String
    public var line: Int
    public var kind: StepKind
    /// Which devices run it (nil: the device of the enclosing block, else the first device).
    public var on: DeviceSelection?
    /// A delay before the step.
    public var after: Distribution?
    /// A human name (`name:`), else a description made from the step.
    public var name: String?

    public init(label: String, line: Int, kind: StepKind, on: DeviceSelection? = nil, after: Distribution? = nil,
                name: String? = nil) {
        self.label = label
        self.line = line
        self.kind = kind
        self.on = on
        self.after = after
        self.name = name
    }

    /// `step 4 (line 23, expect answered within 3 s)`.
    public var title: String { "step \(label) (line \(line), \(name ?? kind.summary))" }
}

public enum DeviceSelection: Sendable, Equatable {
    case all
    /// The first N devices.
    case first(Int)
}

/// Who does an action: the device (its operator) or an app user.
public enum Actor: Sendable, Equatable, CustomStringConvertible {
    case device
    case user(String)

    public var description: String {
        switch self {
        case .device: "device"
        case .user(let u): u
        }
    }
}

/// A fault from the control API's vocabulary (docs/control.md), injected into the device.
public enum ScenarioFault: Sendable, Equatable, CustomStringConvertible {
    /// Drop the MQTT connection without DISCONNECT; reconnect after the seconds.
    case dropMQTT(seconds: Double)
    /// Drop every P2P link as if the network failed.
    case dropP2P
    /// Stop (false) or resume (true) answering the app's heartbeats.
    case heartbeatReplies(Bool)
    /// Publish every reply this many milliseconds late (0: clear).
    case delayReplies(ms: Int64)
    /// Act busy (every valid call gets `busy`), or stop.
    case actBusy(Bool)
    /// Every fault off.
    case clear

    public var description: String {
        switch self {
        case .dropMQTT(let s): "drop MQTT for \(formatNumber(s)) s"
        case .dropP2P: "drop the P2P link"
        case .heartbeatReplies(let on): on ? "answer heartbeats again" : "stop heartbeat replies"
        case .delayReplies(let ms): "delay replies \(ms) ms"
        case .actBusy(let on): on ? "act busy" : "stop acting busy"
        case .clear: "clear faults"
        }
    }
}

public enum StepKind: Sendable, Equatable {
    /// The doorbell is pressed: the device calls `targets` (default: the household).
    case press(targets: [String], callType: CallType?, timeout: Double?)
    /// An app user calls the device.
    case call(user: String, callType: CallType, channelType: ChannelType, timeout: Double)
    case answer(Actor)
    case reject(Actor)
    /// An app user replies `busy` to the device's call.
    case busy(user: String)
    case cancel(Actor)
    case hangUp(Actor)
    /// The answer policy of the device (`Actor.device`) or of an app user.
    case policy(Actor, AnswerPolicy)
    case fault(ScenarioFault)
    /// An app user opens the P2P link (PROTOCOL.md 4) of the current call; `auth` overrides the
    /// computed value (to test refusals).
    case video(user: String, stream: StreamType, auth: String?)
    case sleep(Distribution)
    /// Blocks until the condition holds; failing it stops this device's remaining steps.
    case wait(Condition, timeout: Double)
    /// Checks the condition (waiting up to its limit); a failure is reported and the run goes on.
    case expect(Condition, within: Double?)
    case repeatBlock(times: Int, steps: [Step])
    /// A doorbell step of PROTOCOL.md 8 (`accept`, `decline`, `wake`, `leaveMessage`, `motion`,
    /// `battery`, `dps`).
    case doorbell(DoorbellAction)

    var needsSimulatedApp: Bool {
        switch self {
        case .call, .busy, .video: true
        case .doorbell(let a): a.user != nil
        case .answer(let a), .reject(let a), .cancel(let a), .hangUp(let a), .policy(let a, _):
            a != .device
        case .wait(let c, _), .expect(let c, _): c.needsSimulatedApp
        default: false
        }
    }

    public var summary: String {
        switch self {
        case .press(let targets, let type, _):
            var s = "press"
            if !targets.isEmpty { s += " calling " + targets.joined(separator: ", ") }
            if let type { s += " (call type \(type.rawValue))" }
            return s
        case .call(let user, let type, _, let t): return "\(user) calls the device (call type \(type.rawValue), \(formatNumber(t)) s)"
        case .answer(let a): return "\(a) answers"
        case .reject(let a): return "\(a) rejects"
        case .busy(let u): return "\(u) replies busy"
        case .cancel(let a): return "\(a) cancels"
        case .hangUp(let a): return "\(a) hangs up"
        case .policy(let a, let p): return "\(a) answer policy \(policyName(p))"
        case .fault(let f): return "fault: \(f)"
        case .video(let u, let s, let auth): return "\(u) opens video (\(s == .main ? "main" : "sub")\(auth == nil ? "" : ", auth overridden"))"
        case .sleep(let d): return "sleep \(d)"
        case .wait(let c, let t): return "wait for \(c.summary) (timeout \(formatNumber(t)) s)"
        case .expect(let c, _): return "expect \(c.summary)"
        case .repeatBlock(let n, let steps): return "repeat \(n) times (\(steps.count) steps)"
        case .doorbell(let a): return a.summary
        }
    }
}

func policyName(_ p: AnswerPolicy) -> String {
    switch p {
    case .answerAfter(let ms): ms > 0 ? "answer after \(formatNumber(Double(ms) / 1000)) s" : "answer"
    case .reject: "reject"
    case .rejectAfter(let ms): ms > 0 ? "reject after \(formatNumber(Double(ms) / 1000)) s" : "reject"
    case .ignore: "ignore"
    case .busy: "busy"
    case .manual: "manual"
    }
}

/// Which way a 308 message went, seen from the device.
public enum MessageDirection: String, Sendable, Equatable {
    /// Device -> app (`sent`).
    case sent
    /// App -> device (`received`).
    case received
}

/// What a wait or an expectation checks. Every condition looks at the current call of its device
/// (the latest session seen), except `state` and `connected`.
public enum Condition: Sendable, Equatable {
    /// A 308 event went that way (to/from `peer`, with `reason`).
    case message(CallEvent, MessageDirection, peer: String?, reason: String?)
    case state(CallPhase)
    /// The device's MQTT connection is up (true) or down.
    case connected(Bool)
    /// The current call was answered within this many seconds of its start.
    case answered(withinSeconds: Double)
    /// The first video frame arrived within this many milliseconds of the answer.
    case videoStarted(withinMs: Double, user: String?)
    /// At least `count` video frames, at `fps` or more (20 % tolerance, PROTOCOL.md 4).
    case frames(count: Int, fps: Double?, user: String?)
    /// The current call ended (with this reason / outcome, when given).
    case ended(reason: String?, outcome: CallOutcome?)
    /// No 308 event of this kind in the current call so far (either way unless given).
    case noEvent(CallEvent, MessageDirection?)
    /// The app user's call ended with this SDK error code (PROTOCOL.md 3.5).
    case sdkError(user: String, code: Int)
    /// The device refused a P2P offer (from this user) with `disconnect` close_reason 1.
    case offerRefused(user: String?)
    /// A doorbell condition of PROTOCOL.md 8 (43 sent, `video_doorbell` events, DPs, power).
    case doorbell(DoorbellCondition)

    var needsSimulatedApp: Bool {
        switch self {
        case .sdkError: true
        default: false
        }
    }

    /// How long the condition may take when the step gives no limit.
    var defaultWait: Double {
        switch self {
        case .answered(let s): s
        case .videoStarted(let ms, _): ms / 1000
        case .noEvent: 0
        case .doorbell(let d): d.defaultWait
        default: 10
        }
    }

    public var summary: String {
        switch self {
        case .message(let e, let dir, let peer, let reason):
            var s = dir == .sent ? "device sends \(e.rawValue)" : "device receives \(e.rawValue)"
            if let peer { s += dir == .sent ? " to \(peer)" : " from \(peer)" }
            if let reason { s += " (reason \(reason))" }
            return s
        case .state(let p): return "call state \(p.rawValue)"
        case .connected(let up): return up ? "MQTT connected" : "MQTT disconnected"
        case .answered(let s): return "answered within \(formatNumber(s)) s"
        case .videoStarted(let ms, _): return "video started within \(formatNumber(ms)) ms"
        case .frames(let n, let fps, _):
            return "at least \(n) frames" + (fps.map { " at \(formatNumber($0)) fps" } ?? "")
        case .ended(let reason, let outcome):
            var s = "call ended"
            if let outcome { s += " \(outcome.rawValue)" }
            if let reason { s += " with reason \(reason)" }
            return s
        case .noEvent(let e, let dir):
            return "no \(e.rawValue)" + (dir.map { $0 == .sent ? " sent" : " received" } ?? "") + " in the call"
        case .sdkError(let u, let code): return "\(u) sees SDK error \(code)"
        case .offerRefused(let u): return "offer\(u.map { " from \($0)" } ?? "") refused"
        case .doorbell(let d): return d.summary
        }
    }
}

/// Where a delay comes from (seconds).
public enum Distribution: Sendable, Equatable, CustomStringConvertible {
    case fixed(Double)
    case uniform(Double, Double)
    case exponential(mean: Double)

    public func sample<G: RandomNumberGenerator>(using rng: inout G) -> Double {
        switch self {
        case .fixed(let s): return s
        case .uniform(let a, let b): return a == b ? a : Double.random(in: a...b, using: &rng)
        case .exponential(let mean):
            // Inverse CDF; capped at 10x the mean so one draw cannot stall a run.
            let u = Double.random(in: Double.ulpOfOne..<1, using: &rng)
            return min(-mean * log(u), mean * 10)
        }
    }

    public var description: String {
        switch self {
        case .fixed(let s): "\(formatNumber(s)) s"
        case .uniform(let a, let b): "uniform \(formatNumber(a))-\(formatNumber(b)) s"
        case .exponential(let m): "exponential mean \(formatNumber(m)) s"
        }
    }
}

/// `3`, `0.25`, `1.5` (no trailing zeros).
func formatNumber(_ x: Double) -> String {
    if x == x.rounded(), abs(x) < 1e12 { return String(Int64(x)) }
    var s = String(format: "%.3f", x)
    while s.hasSuffix("0") { s.removeLast() }
    if s.hasSuffix(".") { s.removeLast() }
    return s
}
