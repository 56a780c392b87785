import CallEngine
import DeviceProfile
import Foundation
import IPCWire
import Yams

extension Scenario {
    static let topKeys = ["name", "description", "seed", "devices", "apps", "steps"]
    static let deviceKeys = ["profile", "count", "answerPolicy", "answerDelay", "household", "callType", "callTimeout",
                             "heartbeatInterval", "heartbeatTimeout", "connectTimeout", "liveView"] + doorbellDeviceKeys
    static let appKeys = ["user", "answer", "answerDelay", "heartbeatInterval", "heartbeatTimeout"]
    /// The step kinds (exactly one per step) and the modifiers any step may carry.
    static let stepKinds = ["press", "call", "answer", "reject", "busy", "cancel", "hangup", "policy", "fault", "video",
                            "sleep", "wait", "expect", "repeat"] + doorbellStepKinds
    static let stepModifiers = ["on", "after", "name", "steps"]
    static let conditionKinds = ["sent", "received", "state", "connected", "answered", "videoStarted", "frames", "ended",
                                 "noEvent", "sdkError", "offerRefused"] + doorbellConditionKinds
    static let conditionQualifiers = ["to", "from", "reason", "user", "fps", "outcome", "direction", "within", "timeout"]
        + doorbellQualifiers
    static let faultNames = ["dropMqtt", "dropP2P", "stopHeartbeatReplies", "resumeHeartbeatReplies", "delayReplies",
                             "actBusy", "stopActingBusy", "clear"]

    /// Reads and validates a scenario file; the profile path inside is relative to the file.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(file: path, line: nil, field: "", message: "cannot read the file (missing or not readable)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ScenarioError(file: path, line: nil, field: "", message: "expected UTF-8 text, the file holds other bytes")
        }
        return try parse(yaml: text, fileName: path)
    }

    /// Parses scenario text; `fileName` names it in errors and anchors the profile path.
    public static func parse(yaml: String, fileName: String) throws(ScenarioError) -> Scenario {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: yaml) else {
                throw ScenarioError(file: fileName, line: nil, field: "", message: "the scenario is empty: expected a mapping with name, devices and steps")
            }
            root = node
        } catch let e as ScenarioError {
            throw e
        } catch {
            throw ScenarioError(file: fileName, line: nil, field: "", message: "not valid YAML: \(error)")
        }
        let base = URL(fileURLWithPath: fileName).deletingLastPathComponent().path
        return try ScenarioParser(r: NodeReader(file: fileName), base: base).scenario(root)
    }
}

struct ScenarioParser {
    let r: NodeReader
    let base: String
    /// The profile is a doorbell kind (PROTOCOL.md 8): `sent:`/`received:` name `video_doorbell` events.
    var isDoorbell = false

    func scenario(_ root: Node) throws(ScenarioError) -> Scenario {
        let f = try r.mapping(root, "", allowed: Scenario.topKeys)
        let name = try r.string(try f.required("name", "a name for the report"), "name")
        let description = try f["description"].map { (n) throws(ScenarioError) in try r.string(n, "description") }
        let seed = try f["seed"].map { (n) throws(ScenarioError) in UInt64(try r.int(n, "seed", 0...Int.max)) }
        let devices = try deviceSetup(try f.required("devices", "a mapping with at least 'profile'"))
        var apps: [AppSetup] = []
        if let node = f["apps"] {
            for (n, p) in try r.list(node, "apps") {
                let app = try appSetup(n, p)
                if apps.contains(where: { $0.user == app.user }) { throw r.fail(n, p + ".user", "duplicate app user '\(app.user)'") }
                apps.append(app)
            }
        }
        let stepsNode = try f.required("steps", "a list of steps")
        var parser = self
        parser.isDoorbell = devices.profile.doorbell.kind.isTuyaDoorbell
        let steps = try parser.steps(stepsNode, "steps", labelPrefix: "", devices: devices.count)
        guard !steps.isEmpty else { throw r.fail(stepsNode, "steps", "expected at least one step") }
        let scenario = Scenario(name: name, description: description, file: r.file, seed: seed, devices: devices,
                                apps: apps, steps: steps)
        try checkUsers(scenario)
        return scenario
    }

    func deviceSetup(_ node: Node) throws(ScenarioError) -> DeviceSetup {
        let f = try r.mapping(node, "devices", allowed: Scenario.deviceKeys)
        let profileNode = try f.required("profile", "a device profile path, relative to the scenario")
        let given = try r.string(profileNode, "devices.profile")
        let path = given.hasPrefix("/") ? given : base + "/" + given
        var profile: DeviceProfile
        do {
            profile = try DeviceProfile.load(path: path)
        } catch {
            throw r.fail(profileNode, "devices.profile", "the profile does not load: \(error)")
        }
        let count = try f["count"].map { (n) throws(ScenarioError) in try r.int(n, "devices.count", 1...1000) } ?? 1
        var b = profile.behaviour
        if let n = f["answerPolicy"] {
            let delay = try f["answerDelay"].map { (d) throws(ScenarioError) in try r.number(d, "devices.answerDelay", 0...3600) }
            switch try r.oneOf(n, "devices.answerPolicy", DeviceProfile.AnswerPolicy.names) {
            case "answer": b.answerPolicy = .answer(afterSeconds: delay ?? 0)
            case "reject": b.answerPolicy = .reject
            case "ignore": b.answerPolicy = .ignore
            case "busy": b.answerPolicy = .busy
            default: b.answerPolicy = .manual
            }
        } else if let d = f["answerDelay"] {
            b.answerPolicy = .answer(afterSeconds: try r.number(d, "devices.answerDelay", 0...3600))
        }
        var household: [String]?
        if let n = f["household"] {
            household = try r.strings(n, "devices.household")
            b.household = household ?? []
        }
        if let n = f["callType"] {
            b.callType = CallType(rawValue: try r.int(n, "devices.callType", 1...3)) ?? .oneToOne
        }
        if let n = f["callTimeout"] { b.callTimeout = try r.number(n, "devices.callTimeout", 0.1...86400) }
        profile.behaviour = b
        if let n = f["heartbeatInterval"] { profile.timers.heartbeatInterval = try r.number(n, "devices.heartbeatInterval", 0.05...3600) }
        if let n = f["heartbeatTimeout"] { profile.timers.heartbeatTimeout = try r.number(n, "devices.heartbeatTimeout", 0.1...3600) }
        if let n = f["connectTimeout"] { profile.timers.connectTimeout = try r.number(n, "devices.connectTimeout", 0.1...3600) }
        if let n = f["liveView"] { profile.capabilities.liveView = try r.bool(n, "devices.liveView") }
        if let n = f["ringTimeout"] { profile.doorbell.ringTimeout = try r.number(n, "devices.ringTimeout", 0.1...3600) }
        if let n = f["messages"] { profile.doorbell.messages = try r.bool(n, "devices.messages") }
        if let n = f["messageWindow"] { profile.doorbell.messageWindow = try r.number(n, "devices.messageWindow", 0.1...3600) }
        if let n = f["messageSeconds"] { profile.doorbell.messageSeconds = try r.int(n, "devices.messageSeconds", 1...10) }
        if let n = f["sleepAfter"] { profile.power.sleepAfter = try r.number(n, "devices.sleepAfter", 0.1...86400) }
        if let n = f["wakeLatency"] { profile.power.wakeLatency = try r.number(n, "devices.wakeLatency", 0...60) }
        if count > 1, !profile.isTemplate {
            throw r.fail(profileNode, "devices.profile",
                         "count \(count) needs a fleet template profile (a devId with {index}, like device-profiles/doorbell-secure.yaml)")
        }
        return DeviceSetup(profile: profile, profilePath: path, count: count, householdTemplate: household)
    }

    func appSetup(_ node: Node, _ path: String) throws(ScenarioError) -> AppSetup {
        let f = try r.mapping(node, path, allowed: Scenario.appKeys)
        let user = try r.string(try f.required("user", "the app user id"), f.field("user"))
        let delay = try f["answerDelay"].map { (n) throws(ScenarioError) in try r.number(n, f.field("answerDelay"), 0...3600) }
        var policy: AnswerPolicy = .manual
        if let n = f["answer"] {
            policy = try answerPolicy(n, f.field("answer"), delay: delay)
        } else if let delay {
            policy = .answerAfter(ms: Int64((delay * 1000).rounded()))
        }
        let hbi = try f["heartbeatInterval"].map { (n) throws(ScenarioError) in try r.number(n, f.field("heartbeatInterval"), 0.05...3600) } ?? 10
        let hbt = try f["heartbeatTimeout"].map { (n) throws(ScenarioError) in try r.number(n, f.field("heartbeatTimeout"), 0.1...3600) } ?? 30
        return AppSetup(user: user, answer: policy, heartbeatInterval: hbi, heartbeatTimeout: hbt)
    }

    func answerPolicy(_ node: Node, _ path: String, delay: Double?) throws(ScenarioError) -> AnswerPolicy {
        switch try r.oneOf(node, path, ["answer", "reject", "ignore", "busy", "manual"]) {
        case "answer": return .answerAfter(ms: Int64(((delay ?? 0) * 1000).rounded()))
        case "reject": return .reject
        case "ignore": return .ignore
        case "busy": return .busy
        default: return .manual
        }
    }

    // MARK: Steps

    func steps(_ node: Node, _ path: String, labelPrefix: String, devices: Int) throws(ScenarioError) -> [Step] {
        var out: [Step] = []
        for (i, (n, p)) in try r.list(node, path).enumerated() {
            out.append(try step(n, p, label: labelPrefix + String(i + 1), devices: devices))
        }
        return out
    }

    func step(_ node: Node, _ path: String, label: String, devices: Int) throws(ScenarioError) -> Step {
        let f = try r.mapping(node, path, allowed: Scenario.stepKinds + Scenario.stepModifiers)
        let kinds = f.keys.filter { Scenario.stepKinds.contains($0) }
        guard kinds.count == 1, let key = kinds.first, let value = f[key] else {
            throw r.fail(node, path, kinds.isEmpty
                ? "expected one step kind (\(Scenario.stepKinds.joined(separator: ", "))), got none"
                : "expected one step kind per step, got \(kinds.joined(separator: " and "))")
        }
        let field = f.field(key)
        var on: DeviceSelection?
        if let n = f["on"] {
            if case .scalar(let s) = n, s.string == "all" {
                on = .all
            } else {
                on = .first(try r.int(n, f.field("on"), 1...devices))
            }
        }
        let after = try f["after"].map { (n) throws(ScenarioError) in try r.distribution(n, f.field("after")) }
        let name = try f["name"].map { (n) throws(ScenarioError) in try r.string(n, f.field("name")) }
        if key != "repeat", let s = f["steps"] {
            throw r.fail(s, f.field("steps"), "'steps' belongs to a 'repeat' block")
        }
        let kind: StepKind
        switch key {
        case "press": kind = try press(value, field)
        case "call": kind = try call(value, field)
        case "answer": kind = .answer(try actor(value, field))
        case "reject": kind = .reject(try actor(value, field))
        case "cancel": kind = .cancel(try actor(value, field))
        case "hangup": kind = .hangUp(try actor(value, field))
        case "busy": kind = .busy(user: try r.string(value, field))
        case "policy": kind = try policy(value, field)
        case "fault": kind = .fault(try fault(value, field))
        case "video": kind = try video(value, field)
        case "sleep": kind = .sleep(try r.distribution(value, field))
        case let k where Scenario.doorbellStepKinds.contains(k): kind = try doorbellStep(k, value, field)
        case "wait":
            let (c, limit) = try condition(value, field, limitKey: "timeout")
            kind = .wait(c, timeout: limit ?? c.defaultWait)
        case "expect":
            let (c, limit) = try condition(value, field, limitKey: "within")
            kind = .expect(c, within: limit)
        default:
            let times = try r.int(value, field, 1...100_000)
            let inner = try f.required("steps", "the block's steps")
            let steps = try self.steps(inner, f.field("steps"), labelPrefix: label + ".", devices: devices)
            guard !steps.isEmpty else { throw r.fail(inner, f.field("steps"), "expected at least one step") }
            kind = .repeatBlock(times: times, steps: steps)
        }
        return Step(label: label, line: node.mark?.line ?? 0, kind: kind, on: on, after: after, name: name)
    }

    func actor(_ node: Node, _ path: String) throws(ScenarioError) -> Actor {
        let who = try r.string(node, path)
        return who == "device" ? .device : .user(who)
    }

    func press(_ node: Node, _ path: String) throws(ScenarioError) -> StepKind {
        if case .scalar(let s) = node, node.tagName == .null || s.string == "household" {
            return .press(targets: [], callType: nil, timeout: nil)
        }
        let f = try r.mapping(node, path, allowed: ["targets", "callType", "timeout"])
        let targets = try f["targets"].map { (n) throws(ScenarioError) in try r.strings(n, f.field("targets")) } ?? []
        let type = try f["callType"].map { (n) throws(ScenarioError) in CallType(rawValue: try r.int(n, f.field("callType"), 1...3)) } ?? nil
        let timeout = try f["timeout"].map { (n) throws(ScenarioError) in try r.number(n, f.field("timeout"), 0.1...86400) }
        return .press(targets: targets, callType: type, timeout: timeout)
    }

    func call(_ node: Node, _ path: String) throws(ScenarioError) -> StepKind {
        let f = try r.mapping(node, path, allowed: ["from", "callType", "channelType", "timeout"])
        let user = try r.string(try f.required("from", "the app user who calls"), f.field("from"))
        let type = try f["callType"].map { (n) throws(ScenarioError) in CallType(rawValue: try r.int(n, f.field("callType"), 1...3)) } ?? nil
        let channel = try f["channelType"].map { (n) throws(ScenarioError) in ChannelType(rawValue: try r.int(n, f.field("channelType"), 0...2)) } ?? nil
        let timeout = try f["timeout"].map { (n) throws(ScenarioError) in try r.number(n, f.field("timeout"), 1...86400) } ?? 30
        return .call(user: user, callType: type ?? .oneToOne, channelType: channel ?? .audioVideo, timeout: timeout)
    }

    func policy(_ node: Node, _ path: String) throws(ScenarioError) -> StepKind {
        let f = try r.mapping(node, path, allowed: ["device", "user", "answer", "delay"])
        let delay = try f["delay"].map { (n) throws(ScenarioError) in try r.number(n, f.field("delay"), 0...3600) }
        if let n = f["device"] {
            if f["user"] != nil || f["answer"] != nil {
                throw r.fail(node, path, "expected either {device: POLICY} or {user: U, answer: POLICY}, got both")
            }
            return .policy(.device, try answerPolicy(n, f.field("device"), delay: delay))
        }
        let user = try r.string(try f.required("user", "the app user (or use 'device: POLICY')"), f.field("user"))
        let p = try answerPolicy(try f.required("answer", "answer, reject, ignore, busy or manual"), f.field("answer"), delay: delay)
        return .policy(.user(user), p)
    }

    func fault(_ node: Node, _ path: String) throws(ScenarioError) -> ScenarioFault {
        if case .scalar = node {
            switch try r.oneOf(node, path, Scenario.faultNames) {
            case "dropP2P": return .dropP2P
            case "stopHeartbeatReplies": return .heartbeatReplies(false)
            case "resumeHeartbeatReplies": return .heartbeatReplies(true)
            case "actBusy": return .actBusy(true)
            case "stopActingBusy": return .actBusy(false)
            case "clear": return .clear
            default:
                throw r.fail(node, path, "'\(try r.string(node, path))' needs a value: {dropMqtt: SECONDS} or {delayReplies: MS}")
            }
        }
        let f = try r.mapping(node, path, allowed: ["dropMqtt", "delayReplies"])
        guard f.count == 1, let (key, value) = f.first else { throw r.fail(node, path, "expected one fault") }
        if key == "dropMqtt" { return .dropMQTT(seconds: try r.number(value, f.field(key), 0...3600)) }
        return .delayReplies(ms: Int64(try r.int(value, f.field(key), 0...600_000)))
    }

    func video(_ node: Node, _ path: String) throws(ScenarioError) -> StepKind {
        if case .scalar = node { return .video(user: try r.string(node, path), stream: .main, auth: nil) }
        let f = try r.mapping(node, path, allowed: ["user", "stream", "auth"])
        let user = try r.string(try f.required("user", "the app user who opens the link"), f.field("user"))
        let stream = try f["stream"].map { (n) throws(ScenarioError) in try r.oneOf(n, f.field("stream"), ["main", "sub"]) } ?? "main"
        let auth = try f["auth"].map { (n) throws(ScenarioError) in try r.string(n, f.field("auth")) }
        return .video(user: user, stream: stream == "sub" ? .sub : .main, auth: auth)
    }

    // MARK: Conditions

    /// One condition key with its qualifiers; returns it and the step's limit (`limitKey`).
    func condition(_ node: Node, _ path: String, limitKey: String) throws(ScenarioError) -> (Condition, Double?) {
        // `expect: 43`: the press's protocol 43 (PROTOCOL.md 8.1).
        if isDoorbell, case .scalar(let s) = node, s.string == "43" { return (.doorbell(.pressSent), nil) }
        let f = try r.mapping(node, path, allowed: Scenario.conditionKinds + Scenario.conditionQualifiers)
        let kinds = f.keys.filter { Scenario.conditionKinds.contains($0) }
        guard kinds.count == 1, let key = kinds.first, let v = f[key] else {
            throw r.fail(node, path, "expected exactly one of \(Scenario.conditionKinds.joined(separator: ", ")), got "
                + (kinds.isEmpty ? "none" : kinds.joined(separator: " and ")))
        }
        let other = limitKey == "within" ? "timeout" : "within"
        if let n = f[other] { throw r.fail(n, f.field(other), "a \(path.hasSuffix("wait") ? "wait" : "expect") takes '\(limitKey)', not '\(other)'") }
        let limit = try f[limitKey].map { (n) throws(ScenarioError) in try r.number(n, f.field(limitKey), 0...3600) }
        let field = f.field(key)
        var allowed: [String] = [limitKey]
        func text(_ k: String) throws(ScenarioError) -> String? {
            try f[k].map { (n) throws(ScenarioError) in try r.string(n, f.field(k)) }
        }
        let condition: Condition
        switch key {
        case "sent" where isDoorbell, "received" where isDoorbell:
            let peerKey = key == "sent" ? "to" : "from"
            allowed += [peerKey, "reason"]
            condition = try doorbellMessage(key, v, field, peer: try text(peerKey), reason: try text("reason"))
        case "dp", "power":
            allowed += ["equals", "alert"]
            condition = try doorbellCondition(key, v, field, f)
        case "noEvent" where isDoorbell:
            allowed.append("direction")
            let dir = try f["direction"].map { (n) throws(ScenarioError) in MessageDirection(rawValue: try r.oneOf(n, f.field("direction"), ["sent", "received"])) } ?? nil
            let event = DoorbellEvent(rawValue: try r.oneOf(v, field, DoorbellEvent.allCases.map(\.rawValue))) ?? .accept
            condition = .doorbell(.noMessage(event, dir))
        case "sent", "received":
            let event = try callEvent(v, field)
            let peerKey = key == "sent" ? "to" : "from"
            allowed += [peerKey, "reason"]
            condition = .message(event, key == "sent" ? .sent : .received, peer: try text(peerKey), reason: try text("reason"))
        case "state":
            let phases = ["idle", "ringingIncoming", "ringingOutgoing", "answered"]
            condition = .state(CallPhase(rawValue: try r.oneOf(v, field, phases)) ?? .idle)
        case "connected": condition = .connected(try r.bool(v, field))
        case "answered": condition = .answered(withinSeconds: try r.number(v, field, 0.001...3600))
        case "videoStarted":
            allowed.append("user")
            condition = .videoStarted(withinMs: try r.number(v, field, 1...3_600_000, unit: "milliseconds"), user: try text("user"))
        case "frames":
            allowed += ["fps", "user"]
            let fps = try f["fps"].map { (n) throws(ScenarioError) in try r.number(n, f.field("fps"), 0.1...240, unit: "frames per second") }
            condition = .frames(count: try r.int(v, field, 1...1_000_000), fps: fps, user: try text("user"))
        case "ended":
            allowed += ["outcome"]
            var reason: String?
            guard case .scalar(let s) = v else {
                throw r.fail(v, field, "expected a reason (\(StopReason.allCases.map(\.rawValue).joined(separator: ", "))) or any, got \(describe(v))")
            }
            if s.string != "any" {
                reason = try r.oneOf(v, field, StopReason.allCases.map(\.rawValue) + ["any"])
            }
            let outcome = try f["outcome"].map { (n) throws(ScenarioError) in
                CallOutcome(rawValue: try r.oneOf(n, f.field("outcome"), CallOutcome.allNames))
            } ?? nil
            condition = .ended(reason: reason, outcome: outcome)
        case "noEvent":
            allowed.append("direction")
            let dir = try f["direction"].map { (n) throws(ScenarioError) in MessageDirection(rawValue: try r.oneOf(n, f.field("direction"), ["sent", "received"])) } ?? nil
            condition = .noEvent(try callEvent(v, field), dir)
        case "sdkError":
            allowed.append("user")
            let code = try r.int(v, field, -2599 ... -2500)
            guard SDKError(rawValue: code) != nil else {
                throw r.fail(v, field, "expected an SDK error code of PROTOCOL.md 3.5 (\(SDKError.allCases.map { String($0.rawValue) }.joined(separator: ", "))), got \(code)")
            }
            guard let user = try text("user") else { throw r.fail(node, f.field("user"), "missing required field 'user': the app user whose call ended") }
            condition = .sdkError(user: user, code: code)
        default:
            if case .scalar(let s) = v, s.string == "any" || v.tagName == .null {
                condition = .offerRefused(user: nil)
            } else {
                condition = .offerRefused(user: try r.string(v, field))
            }
        }
        for q in f.keys where Scenario.conditionQualifiers.contains(q) && !allowed.contains(q) {
            throw r.fail(f[q], f.field(q), "'\(q)' does not apply to '\(key)' (it takes: \(allowed.joined(separator: ", ")))")
        }
        return (condition, limit)
    }

    func callEvent(_ node: Node, _ path: String) throws(ScenarioError) -> CallEvent {
        CallEvent(rawValue: try r.oneOf(node, path, CallEvent.allCases.map(\.rawValue))) ?? .call
    }

    // MARK: Cross-checks

    /// Every user a step names is a simulated app user (only those can act in-process).
    func checkUsers(_ s: Scenario) throws(ScenarioError) {
        let known = Set(s.apps.map(\.user))
        for step in s.allSteps {
            var users: [String] = []
            switch step.kind {
            case .call(let u, _, _, _), .busy(let u), .video(let u, _, _): users = [u]
            case .answer(.user(let u)), .reject(.user(let u)), .cancel(.user(let u)), .hangUp(.user(let u)), .policy(.user(let u), _):
                users = [u]
            case .wait(.sdkError(let u, _), _), .expect(.sdkError(let u, _), _): users = [u]
            case .doorbell(let a): users = a.user.map { [$0] } ?? []
            default: break
            }
            for u in users where !known.contains(u) {
                throw ScenarioError(file: r.file, line: step.line, field: "steps",
                                    message: "step \(step.label) names app user '\(u)', who is not under 'apps' (\(known.sorted().joined(separator: ", ")))")
            }
        }
    }
}

extension CallOutcome {
    static let allNames = ["hungUp", "cancelled", "rejected", "busy", "notAnswered", "answeredElsewhere", "rejectedElsewhere", "stopped"]
}
