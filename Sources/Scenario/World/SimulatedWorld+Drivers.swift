import AppSimulator
import CallEngine
import Emulator
import IPCWire
import Simulation

/// A device of the simulated world: the scenario's actions become the operator's actions on its
/// real engine inside `ScenarioSimulation`.
final class SimulatedDevice: ScenarioDeviceDriver, Sendable {
    let devId: String
    let isDoorbell: Bool
    private let core: SimulationCore

    init(devId: String, isDoorbell: Bool, core: SimulationCore) {
        self.devId = devId
        self.isDoorbell = isDoorbell
        self.core = core
    }

    func press(targets: [String], callType: CallType?, timeoutSeconds: Double?) async throws -> String {
        try core.run { [devId] s throws(CallActionError) in
            try s.press(device: devId, targets: targets, callType: callType, timeoutSeconds: timeoutSeconds)
        }
    }

    private func act(_ action: LocalAction) throws {
        try core.run { [devId] s throws(CallActionError) in try s.act(device: devId, action) }
    }

    func answer() async throws { try act(.answer) }
    func reject() async throws { try act(.reject) }
    func cancel() async throws { try act(.cancel) }
    func hangUp() async throws { try act(.hangUp) }
    func setAnswerPolicy(_ policy: AnswerPolicy) async throws { try act(.setAnswerPolicy(policy)) }

    func inject(_ fault: ScenarioFault) async throws {
        switch fault {
        case .dropMQTT(let seconds):
            try core.run { [devId] s throws(CallActionError) in s.dropConnection(device: devId, seconds: seconds) }
        case .dropP2P:
            try core.run { [devId] s throws(CallActionError) in s.dropLinks(device: devId) }
        case .heartbeatReplies(let on):
            try core.run { [devId] s throws(CallActionError) in
                s.setFaults(device: devId, heartbeatRepliesSuppressed: !on, replyDelayMs: s.faults(device: devId).replyDelayMs)
            }
        case .delayReplies(let ms):
            try core.run { [devId] s throws(CallActionError) in
                s.setFaults(device: devId, heartbeatRepliesSuppressed: s.faults(device: devId).heartbeatRepliesSuppressed, replyDelayMs: ms)
            }
        case .actBusy(let on):
            try act(.setActingBusy(on))
        case .clear:
            let busy = try core.run { [devId] s throws(CallActionError) in
                s.setFaults(device: devId, heartbeatRepliesSuppressed: false, replyDelayMs: 0)
                return s.isActingBusy(device: devId)
            }
            if busy { try act(.setActingBusy(false)) }
        }
    }

    func phase() async -> CallPhase { core.read { [devId] in $0.phase(device: devId) ?? .idle } }
    func isConnected() async -> Bool { core.read { [devId] in $0.isConnected(device: devId) } }
    /// The simulated links carry no video.
    func framesSent() async -> [String: Int] { [:] }
    /// The world hands every event to the run itself (`SimulatedWorld.observe`).
    func events() async -> AsyncStream<DeviceEvent> { AsyncStream { $0.finish() } }

    // PROTOCOL.md 8.3 and 8.4 are not simulated: `SimulatedWorld.unsupported` refuses such scenarios
    // before they start; these answer plainly if called anyway.
    func dataPoint(_ id: DPId) async -> DPValue? { nil }
    func powerName() async -> String { "awake" }
    func motion() async throws { throw ScenarioActionError("motion is not simulated") }
    func wake() async throws { throw ScenarioActionError("sleep and wake are not simulated") }
    func setBattery(percent: Int) async throws { throw ScenarioActionError("the battery is not simulated") }
    func setDataPoints(_ values: [DPId: DPValue]) async throws { throw ScenarioActionError("data points are not simulated") }
}

/// An app user of the simulated world: the SDK's calls on its real app engines.
final class SimulatedApp: ScenarioAppDriver, Sendable {
    let userId: String
    private let core: SimulationCore

    init(userId: String, core: SimulationCore) {
        self.userId = userId
        self.core = core
    }

    func startCall(devId: String, timeoutSeconds: Double, callType: CallType, channelType: ChannelType) async throws -> String {
        try core.run { [userId] s throws(CallActionError) in
            try s.startCall(user: userId, devId: devId, timeoutSeconds: Int64(timeoutSeconds.rounded(.up)), callType: callType,
                            channelType: channelType)
        }
    }

    private func act(_ action: LocalAction) throws {
        try core.run { [userId] s throws(CallActionError) in try s.act(user: userId, action) }
    }

    func answer() async throws { try act(.answer) }
    func reject() async throws { try act(.reject) }
    func busy() async throws { try act(.busy) }
    func cancel() async throws { try act(.cancel) }
    func hangUp() async throws { try act(.hangUp) }
    func setIncomingPolicy(_ policy: AnswerPolicy) async throws { try act(.setAnswerPolicy(policy)) }

    func openVideo(sessionId: String, devId: String, stream: StreamType, auth: String?) async throws {
        try core.run { [userId] s throws(CallActionError) in
            try s.openVideo(user: userId, sessionId: sessionId, devId: devId, stream: stream, auth: auth)
        }
    }

    func videoStats(sessionId: String) async -> VideoStats? { nil }
    func answeredSession() async -> String? { core.read { [userId] in $0.answeredSession(user: userId) } }
    func phase() async -> CallPhase { core.read { [userId] in $0.phase(user: userId) } }
    func events() async -> AsyncStream<AppEvent> { AsyncStream { $0.finish() } }

    func acceptDoorbell(devId: String, callId: String) async throws { try doorbell(devId, callId, .answer) }
    func declineDoorbell(devId: String, callId: String) async throws { try doorbell(devId, callId, .reject) }
    func hangUpDoorbell(devId: String, callId: String) async throws { try doorbell(devId, callId, .hangUp) }

    private func doorbell(_ devId: String, _ callId: String, _ action: LocalAction) throws {
        try core.run { [userId] s throws(CallActionError) in try s.actOnDoorbell(user: userId, devId: devId, callId: callId, action) }
    }

    func ringingDoorbell() async -> String? { core.read { [userId] in $0.ringingDoorbell(user: userId) } }
    func answeredDoorbell() async -> String? { core.read { [userId] in $0.answeredDoorbell(user: userId)?.sessionId } }

    func openDoorbellVideo(stream: StreamType) async throws {
        guard let call = core.read({ [userId] in $0.answeredDoorbell(user: userId) }) else {
            throw ScenarioActionError("no accepted doorbell call to open video for")
        }
        try await openVideo(sessionId: call.sessionId, devId: call.peer, stream: stream, auth: nil)
    }

    func wake(devId: String) async throws -> Double { throw ScenarioActionError("sleep and wake are not simulated") }
    func setDPs(devId: String, _ values: [DPId: DPValue]) async throws { throw ScenarioActionError("data points are not simulated") }
}
