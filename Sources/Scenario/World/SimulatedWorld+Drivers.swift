import AppSimulator
import CallEngine
import Emulator
import Foundation
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
    /// Frames sent on each open simulated link (a model of the stream: counts, no pixels).
    func framesSent() async -> [String: Int] { core.read { [devId] in $0.framesSent(device: devId) } }
    /// The world hands every event to the run itself (`SimulatedWorld.observe`).
    func events() async -> AsyncStream<DeviceEvent> { AsyncStream { $0.finish() } }

    // PROTOCOL.md 8.3-8.5 on the simulated device: its DP store, power machine and simulated camera.
    func dataPoint(_ id: DPId) async -> DPValue? { core.read { [devId] in $0.dataPoint(device: devId, id) } }
    func powerName() async -> String { core.read { [devId] in $0.powerName(device: devId) } }
    func motion() async throws { try core.run { [devId] s throws(CallActionError) in try s.motion(device: devId) } }
    func wake() async throws { try core.run { [devId] s throws(CallActionError) in try s.wake(device: devId) } }
    func setBattery(percent: Int) async throws {
        try core.run { [devId] s throws(CallActionError) in try s.setBattery(device: devId, percent: percent) }
    }
    func setDataPoints(_ values: [DPId: DPValue]) async throws {
        try core.run { [devId] s throws(CallActionError) in try s.setDataPoints(device: devId, values) }
    }
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

    /// What the app "decoded" on the simulated link, as `AppUser` measures it (no stamps: no pixels).
    func videoStats(sessionId: String) async -> VideoStats? {
        guard let v = core.read({ [userId] in $0.videoStats(user: userId, sessionId: sessionId) }) else { return nil }
        var stats = VideoStats()
        stats.framesDecoded = v.framesDecoded
        stats.framesDropped = v.framesDropped
        stats.width = v.width
        stats.height = v.height
        stats.firstFrameAt = v.firstFrameMs.map(Self.date)
        stats.lastFrameAt = v.lastFrameMs.map(Self.date)
        if let first = v.firstFrameMs, let answered = v.answeredMs { stats.answerToFirstFrameMs = Double(first - answered) }
        return stats
    }

    private static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
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

    /// PROTOCOL.md 8.4, as `AppUser.wake`: publishes on the wake topic, then waits (on the run's
    /// clock, up to 10 s) for a DP 149 true report; the latency it saw, in ms.
    func wake(devId: String) async throws -> Double {
        let started = try core.run { [userId] s throws(CallActionError) -> Int64 in
            try s.publishWake(user: userId, devId: devId)
            return s.now
        }
        let clock = core.clock
        let awake = await clock.waitUntil(clock.now.addingTimeInterval(Self.wakeTimeout)) { self.sawAwake(devId, since: started) }
        guard awake, let seen = core.read({ [userId] in $0.seenDataPoint(user: userId, devId: devId, DataPointCatalogue.awake) }) else {
            throw ScenarioActionError("\(devId) did not report DP 149 true within \(Int(Self.wakeTimeout)) s of the wake")
        }
        return Double(seen.atMs - started)
    }

    static let wakeTimeout = 10.0

    private func sawAwake(_ devId: String, since started: Int64) -> Bool {
        guard let seen = core.read({ [userId] in $0.seenDataPoint(user: userId, devId: devId, DataPointCatalogue.awake) }) else { return false }
        return seen.atMs >= started && seen.value == .bool(true)
    }

    func setDPs(devId: String, _ values: [DPId: DPValue]) async throws {
        try core.run { [userId] s throws(CallActionError) in try s.setDPs(user: userId, devId: devId, values) }
    }
}
