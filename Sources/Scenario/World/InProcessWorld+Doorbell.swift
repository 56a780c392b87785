import AppSimulator
import CallEngine
import Emulator
import IPCWire

/// The doorbell parts of PROTOCOL.md 8 of the in-process world, over the public API of `Device`
/// and `AppUser`.
extension InProcessDevice {
    var isDoorbell: Bool { device.doorbellKind.isTuyaDoorbell }

    func dataPoint(_ id: DPId) async -> DPValue? {
        await device.dataPointValues.first { $0.id == id }?.value
    }

    func powerName() async -> String {
        switch await device.powerState {
        case .awake: "awake"
        case .asleep: "asleep"
        case .waking: "waking"
        }
    }

    func motion() async throws { await device.motion() }
    func wake() async throws { await device.wake() }

    func setBattery(percent: Int) async throws { await device.setBattery(percent: percent) }

    func setDataPoints(_ values: [DPId: DPValue]) async throws { try await device.setDataPoints(values) }
}

extension InProcessApp {
    func acceptDoorbell(devId: String, callId: String) async throws { try await user.acceptDoorbell(devId: devId, callId: callId) }
    func declineDoorbell(devId: String, callId: String) async throws { try await user.declineDoorbell(devId: devId, callId: callId) }
    func hangUpDoorbell(devId: String, callId: String) async throws { try await user.hangUpDoorbell(devId: devId, callId: callId) }

    func ringingDoorbell() async -> String? {
        guard let s = await user.doorbellSession, s.phase != .answered else { return nil }
        return s.sessionId
    }

    func answeredDoorbell() async -> String? { await user.answeredDoorbell?.sessionId }

    func openDoorbellVideo(stream: StreamType) async throws {
        _ = try await user.openDoorbellVideo(streamType: stream)
    }

    func wake(devId: String) async throws -> Double { try await user.wake(devId: devId).milliseconds }

    func setDPs(devId: String, _ values: [DPId: DPValue]) async throws { try await user.setDPs(devId: devId, values) }
}
