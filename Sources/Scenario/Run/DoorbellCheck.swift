import CallEngine
import Foundation
import IPCWire

/// Evaluates a doorbell condition of PROTOCOL.md 8 on one device. It waits on events: it checks,
/// and checks again at each change the world reports (every device event is recorded on the
/// timeline) until the condition holds or the limit passes on the run's clock.
struct DoorbellCheck: Sendable {
    let condition: DoorbellCondition
    let device: any ScenarioDeviceDriver
    let timeline: Timeline
    let user: @Sendable (String) -> String

    /// The device's doorbell observations since the current call began.
    private func observations() -> [(Observation, DoorbellObservation)] {
        let since = timeline.currentCall(device.devId)?.start ?? .distantPast
        return timeline.of(device.devId, session: nil).compactMap { o in
            guard o.time >= since, case .doorbell(let d) = o.kind else { return nil }
            return (o, d)
        }
    }

    private var recent: String {
        let texts = observations().suffix(8).map { $0.1.shortText }
        return texts.isEmpty ? "no doorbell events" : "the doorbell events: " + texts.joined(separator: ", ")
    }

    /// Waits for a verdict (`limit` seconds at most; 0 checks once).
    func run(limit: Double) async -> (passed: Bool, seen: String?) {
        let clock = timeline.clock
        if case .some(let verdict) = await evaluate() { return verdict }
        let holds = await clock.waitUntil(clock.now.addingTimeInterval(limit)) { await evaluate() != nil }
        if holds, let verdict = await evaluate() { return verdict }
        return (false, await pending())
    }

    /// nil while pending; a verdict (pass, or a failure for good) otherwise.
    private func evaluate() async -> (passed: Bool, seen: String?)? {
        let callId = timeline.currentCall(device.devId)?.session
        switch condition {
        case .pressSent:
            let hit = observations().contains { _, d in
                if case .pressed(let id) = d { callId == nil || id == callId } else { false }
            }
            return hit ? (true, nil) : nil
        case .message(let event, let dir, let peer, let reason):
            let peer = peer.map(user)
            let hit = observations().contains { _, d in
                guard case .message(let m, let md) = d else { return false }
                return md == dir && m.event == event && (callId == nil || m.eData == callId)
                    && (peer == nil || m.uid == peer) && (reason == nil || m.reason == reason)
            }
            return hit ? (true, nil) : nil
        case .noMessage(let event, let dir):
            let hit = observations().first { _, d in
                guard case .message(let m, let md) = d else { return false }
                return m.event == event && (dir == nil || md == dir) && (callId == nil || m.eData == callId)
            }
            if let hit { return (false, "saw \(hit.1.shortText)") }
            return (true, nil)
        case .dataPoint(let id, let equals, let alert):
            guard let value = await device.dataPoint(id) else { return (false, "the device has no DP \(id)") }
            if let equals, value != equals { return nil }
            if let alert, Self.alertCommand(value) != alert { return nil }
            return (true, nil)
        case .power(let state):
            return await device.powerName() == state ? (true, nil) : nil
        }
    }

    private func pending() async -> String {
        switch condition {
        case .dataPoint(let id, _, let alert):
            guard let value = await device.dataPoint(id) else { return "the device has no DP \(id)" }
            if alert != nil { return "DP \(id) alert was \(Self.alertCommand(value) ?? "none")" }
            return "DP \(id) was \(value)"
        case .power:
            return "the device was \(await device.powerName())"
        default:
            return "saw none; \(recent)"
        }
    }

    /// DP 212's `cmd` (PROTOCOL.md 8.3: base64 of a JSON object), nil when it is not one.
    static func alertCommand(_ value: DPValue) -> String? {
        guard case .string(let b64) = value, let data = Data(base64Encoded: b64),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["cmd"] as? String
    }
}
