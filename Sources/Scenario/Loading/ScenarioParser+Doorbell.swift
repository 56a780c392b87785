import CallEngine
import IPCWire
import Yams

/// The doorbell vocabulary of PROTOCOL.md 8 in scenario files (docs/scenarios.md, "Doorbells").
extension Scenario {
    static let doorbellStepKinds = ["accept", "decline", "wake", "leaveMessage", "motion", "battery", "dps"]
    static let doorbellConditionKinds = ["dp", "power"]
    static let doorbellQualifiers = ["equals", "alert"]
    static let doorbellDeviceKeys = ["ringTimeout", "messages", "messageWindow", "messageSeconds", "sleepAfter", "wakeLatency"]
    static let alertCommands = ["ipc_motion", "ipc_doorbell", "ipc_leave_msg", "ipc_low_battery"]
}

extension ScenarioParser {
    /// One doorbell step (`accept: USER`, `wake: USER` or `{user: U, by: topic|dp}` or `device`, ...).
    func doorbellStep(_ key: String, _ value: Node, _ field: String) throws(ScenarioError) -> StepKind {
        switch key {
        case "accept": return .doorbell(.accept(user: try r.string(value, field)))
        case "decline": return .doorbell(.decline(user: try r.string(value, field)))
        case "wake":
            if case .scalar = value {
                let who = try r.string(value, field)
                return .doorbell(.wake(who == "device" ? .device : .topic(user: who)))
            }
            let f = try r.mapping(value, field, allowed: ["user", "by"])
            let by = try f["by"].map { (n) throws(ScenarioError) in try r.oneOf(n, f.field("by"), ["topic", "dp"]) } ?? "topic"
            let user = try r.string(try f.required("user", "the app user who wakes the device"), f.field("user"))
            return .doorbell(.wake(by == "dp" ? .dataPoint(user: user) : .topic(user: user)))
        case "leaveMessage":
            if case .scalar = value, value.tagName == .null { return .doorbell(.leaveMessage(within: 30)) }
            let f = try r.mapping(value, field, allowed: ["within"])
            let within = try f["within"].map { (n) throws(ScenarioError) in try r.number(n, f.field("within"), 0.1...600) } ?? 30
            return .doorbell(.leaveMessage(within: within))
        case "motion":
            return .doorbell(.motion)
        case "battery":
            return .doorbell(.battery(percent: try r.int(value, field, 0...100)))
        default:
            let f = try r.mapping(value, field, allowed: DataPointCatalogue.ids.map(String.init))
            var values: [DPId: DPValue] = [:]
            for k in f.keys {
                guard let id = DPId(k), let n = f[k] else { continue }
                values[id] = try dpValue(n, f.field(k))
            }
            guard !values.isEmpty else { throw r.fail(value, field, "expected at least one DP: {ID: VALUE}") }
            return .doorbell(.setDataPoints(values))
        }
    }

    /// A DP value as YAML writes it: `true`/`false`, an integer, or a string.
    func dpValue(_ node: Node, _ field: String) throws(ScenarioError) -> DPValue {
        guard case .scalar(let s) = node, node.tagName != .null else {
            throw r.fail(node, field, "expected a DP value (true, false, an integer or a string), got \(describe(node))")
        }
        if s.style == .plain {
            if s.string == "true" { return .bool(true) }
            if s.string == "false" { return .bool(false) }
            if let i = Int64(s.string) { return .int(i) }
        }
        return .string(s.string)
    }

    /// `sent:`/`received:` of a doorbell device: `43` (sent only) or a `video_doorbell` event.
    func doorbellMessage(_ key: String, _ v: Node, _ field: String, peer: String?, reason: String?) throws(ScenarioError) -> Condition {
        if case .scalar(let s) = v, s.string == "43" {
            guard key == "sent" else { throw r.fail(v, field, "a 43 goes from the device: use 'sent: 43'") }
            return .doorbell(.pressSent)
        }
        let event = DoorbellEvent(rawValue: try r.oneOf(v, field, ["43"] + DoorbellEvent.allCases.map(\.rawValue))) ?? .accept
        return .doorbell(.message(event, key == "sent" ? .sent : .received, peer: peer, reason: reason))
    }

    /// `dp: ID` (`equals: V`, `alert: CMD`) and `power: awake|asleep|waking`.
    func doorbellCondition(_ key: String, _ v: Node, _ field: String, _ f: Fields) throws(ScenarioError) -> Condition {
        if key == "power" { return .doorbell(.power(try r.oneOf(v, field, ["awake", "asleep", "waking"]))) }
        let id = try r.int(v, field, 1...1000)
        guard DataPointCatalogue.definition(id) != nil else {
            throw r.fail(v, field, "expected a DP of PROTOCOL.md 8.3 (\(DataPointCatalogue.ids.map(String.init).joined(separator: ", "))), got \(id)")
        }
        let equals = try f["equals"].map { (n) throws(ScenarioError) in try dpValue(n, f.field("equals")) }
        let alert = try f["alert"].map { (n) throws(ScenarioError) in try r.oneOf(n, f.field("alert"), Scenario.alertCommands) }
        return .doorbell(.dataPoint(id, equals: equals, alert: alert))
    }
}
