import AppSimulator
import CallEngine
import Emulator
import Foundation
import IPCWire

/// The doorbell steps of PROTOCOL.md 8 (docs/scenarios.md, "Doorbells"). Every wait here is on
/// the app's or the device's events (the world reports them; the run's clock wakes the waits),
/// never a poll.
extension ScenarioRunner {
    /// A device's doorbell event on the timeline (the call id as the session where there is one).
    func recordDoorbell(_ devId: String, _ event: DeviceEvent) {
        let current = timeline.currentCall(devId)?.session
        switch event {
        case .pressed(let callId): timeline.record(devId, session: callId, .doorbell(.pressed(callId: callId)))
        case .receivedDoorbell(let m): timeline.record(devId, session: m.eData, .doorbell(.message(m, .received)))
        case .sentDoorbell(let m): timeline.record(devId, session: m.eData, .doorbell(.message(m, .sent)))
        case .dataPointsReported(let dps): timeline.record(devId, session: current, .doorbell(.dataPoints(dps)))
        case .fellAsleep: timeline.record(devId, .doorbell(.asleep))
        case .wokeUp(let ms): timeline.record(devId, session: current, .doorbell(.awake(latencyMs: ms)))
        case .mediaStored(let name, let path): timeline.record(devId, session: current, .doorbell(.media(name: name, path: path)))
        default: break
        }
    }

    /// Carries out a doorbell action on `device`.
    func actDoorbell(_ action: DoorbellAction, device: any ScenarioDeviceDriver, expand: (String) -> String) async throws {
        let devId = device.devId
        switch action {
        case .accept(let u):
            let user = expand(u)
            let callId = try await ringingCall(of: device, at: user)
            try await app(user).acceptDoorbell(devId: devId, callId: callId)
            timeline.record(devId, session: callId, .action("\(user) accepts"))
        case .decline(let u):
            let user = expand(u)
            let callId = try await ringingCall(of: device, at: user)
            try await app(user).declineDoorbell(devId: devId, callId: callId)
            timeline.record(devId, session: callId, .action("\(user) declines"))
        case .wake(.topic(let u)):
            let user = expand(u)
            let ms = try await app(user).wake(devId: devId)
            timeline.record(devId, session: timeline.currentCall(devId)?.session,
                            .action("\(user) woke the device (\(formatNumber((ms * 10).rounded() / 10)) ms)"))
        case .wake(.dataPoint(let u)):
            let user = expand(u)
            try await app(user).setDPs(devId: devId, [DataPointCatalogue.awake: .bool(true)])
            timeline.record(devId, .action("\(user) sets DP 149 true"))
        case .wake(.device):
            try await device.wake()
            timeline.record(devId, .action("device woken"))
        case .leaveMessage(let within):
            // PROTOCOL.md 8.5: a press inside the window records a message; DP 212 ipc_leave_msg
            // is reported once it is written.
            let deadline = clock.now.addingTimeInterval(within)
            let callId = try await device.press(targets: [], callType: nil, timeoutSeconds: nil)
            timeline.record(devId, session: callId, .action("press (leave a message)"))
            let check = DoorbellCheck(condition: .dataPoint(DataPointCatalogue.initiativeMessage, equals: nil, alert: "ipc_leave_msg"),
                                      device: device, timeline: timeline, user: { $0 })
            let got = await clock.waitUntil(deadline) {
                guard let v = await device.dataPoint(DataPointCatalogue.initiativeMessage) else { return false }
                return DoorbellCheck.alertCommand(v) == "ipc_leave_msg"
            }
            if !got {
                let (_, seen) = await check.run(limit: 0)
                throw ScenarioActionError("no DP 212 ipc_leave_msg within \(formatNumber(within)) s; \(seen ?? "")")
            }
        case .motion:
            try await device.motion()
            timeline.record(devId, session: timeline.currentCall(devId)?.session, .action("motion"))
        case .battery(let percent):
            try await device.setBattery(percent: percent)
            timeline.record(devId, .action("battery \(percent) %"))
        case .setDataPoints(let values):
            try await device.setDataPoints(values)
            timeline.record(devId, .action(action.summary))
        }
    }

    /// The device's current doorbell call, once it rings on `user`'s phone (up to 3 s, on the
    /// app's events: the 43 may reach the app a moment after the press returned).
    private func ringingCall(of device: any ScenarioDeviceDriver, at user: String) async throws -> String {
        guard let callId = timeline.currentCall(device.devId)?.session else {
            throw ScenarioActionError("no doorbell call: press first")
        }
        let app = try app(user)
        let rings = await clock.waitUntil(clock.now.addingTimeInterval(3)) { await app.ringingDoorbell() == callId }
        guard rings else { throw ScenarioActionError("doorbell call \(callId) does not ring on \(user)'s phone") }
        return callId
    }

    /// `hangup: USER` on a doorbell device: `stop` after the accept (8.2).
    func hangUpDoorbell(_ user: String, device: any ScenarioDeviceDriver) async throws {
        guard let callId = timeline.currentCall(device.devId)?.session else { throw ScenarioActionError("no doorbell call") }
        try await app(user).hangUpDoorbell(devId: device.devId, callId: callId)
        timeline.record(device.devId, session: callId, .action("\(user) hangs up"))
    }

    /// `video: USER` on a doorbell device: once the user holds the accepted call (its `answered`
    /// seen, on the app's events), the §4 link with the call id as the session.
    func openDoorbellVideo(_ user: String, stream: StreamType, device: any ScenarioDeviceDriver) async throws {
        guard let callId = timeline.currentCall(device.devId)?.session else { throw ScenarioActionError("no doorbell call") }
        let app = try app(user)
        let holds = await clock.waitUntil(clock.now.addingTimeInterval(3)) { await app.answeredDoorbell() == callId }
        guard holds else { throw ScenarioActionError("\(user) did not hold the accepted doorbell call \(callId) within 3 s") }
        try await app.openDoorbellVideo(stream: stream)
        timeline.record(device.devId, session: callId, .action("\(user) opens video"))
    }

    /// A wait or expectation on a doorbell condition (checked on events).
    func checkDoorbell(_ condition: DoorbellCondition, limit: Double?, device: any ScenarioDeviceDriver,
                       expand: @escaping @Sendable (String) -> String) async -> (Bool, String?) {
        let check = DoorbellCheck(condition: condition, device: device, timeline: timeline, user: expand)
        return await check.run(limit: limit ?? condition.defaultWait)
    }
}
