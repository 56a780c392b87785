import AppSimulator
import CallEngine
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Simulation
import Synchronization

/// The world of `ipcemu scenario run --simulated` (docs/scenarios.md, "Simulated time"): the
/// scenario's devices and app users on the real engines and codecs inside `ScenarioSimulation`
/// (Sources/Simulation), a broker without faults, links that connect after a fixed 150 ms, and the
/// run's clock the simulator's (`SimulatedScenarioClock`): a `within: 30` costs no wall time.
/// What it cannot do (decoded video, camera media, data points, sleep and wake) it names before the run starts.
public final class SimulatedWorld: ScenarioWorld, DiscreteEventWorld {
    public let appMode: AppMode = .simulated
    public let brokerURL = "(simulated broker)"
    public let devices: [any ScenarioDeviceDriver]
    public let clock: any ScenarioClock
    private let apps: [String: SimulatedApp]
    let core: SimulationCore

    /// Builds the devices and app users of `scenario` (as `InProcessWorld` does from the same file).
    public init(_ scenario: Scenario) throws {
        let simClock = SimulatedScenarioClock(startMs: ScenarioSimulation.startMs)
        let core = SimulationCore(ScenarioSimulation(seed: scenario.seed ?? 1))
        var drivers: [SimulatedDevice] = []
        let setup = scenario.devices
        for index in 0..<setup.count {
            var profile = setup.profile
            if profile.isTemplate || setup.count > 1 { profile = try profile.instance(index: index) }
            if let household = setup.householdTemplate {
                profile.behaviour.household = household.map { expandIndex($0, index: index) }
            }
            let id = profile.identity
            let device = ScenarioSimDeviceSetup(
                devId: id.devId, engine: DeviceSideEngine(profile: profile), kind: profile.doorbell.kind.rawValue,
                secrets: P2PLinkRules.DeviceSecrets(devId: id.devId, p2pPassword: id.p2pPassword, localKey: id.localKey,
                                                    liveView: profile.capabilities.liveView))
            core.sim.withLock { $0.addDevice(device) }
            drivers.append(SimulatedDevice(devId: id.devId, isDoorbell: profile.doorbell.kind.isTuyaDoorbell, core: core))
        }
        var apps: [String: SimulatedApp] = [:]
        for app in scenario.apps {
            let instances: [(String, [String])] = app.isPerDevice
                ? drivers.enumerated().map { (expandIndex(app.user, index: $0.offset), [$0.element.devId]) }
                : [(app.user, drivers.map(\.devId))]
            for (userId, reach) in instances {
                let call = AppEngineConfig(userId: userId, heartbeatIntervalMs: Int64(app.heartbeatInterval * 1000),
                                           heartbeatTimeoutMs: Int64(app.heartbeatTimeout * 1000), incomingPolicy: app.answer)
                let bell = AppDoorbellConfig(userId: userId, heartbeatIntervalMs: call.heartbeatIntervalMs,
                                             heartbeatTimeoutMs: call.heartbeatTimeoutMs, policy: call.incomingPolicy)
                core.sim.withLock { $0.addUser(userId: userId, call: call, doorbell: bell, devices: reach) }
                apps[userId] = SimulatedApp(userId: userId, core: core)
            }
        }
        self.core = core
        self.devices = drivers
        self.apps = apps
        self.clock = simClock
        simClock.drive(self)
    }

    public func app(_ userId: String) -> (any ScenarioAppDriver)? { apps[userId] }

    public func close() async { clock.finish() }

    /// Every event is handed over as the simulation makes it (no tasks: the clock must see them at once).
    public func observe(users: [String], _ sink: @escaping @Sendable (WorldEvent) -> Void) async -> [Task<Void, Never>] {
        let wanted = Set(users)
        core.sink.withLock { $0 = { event in
            if case .app(let u, _) = event, !wanted.contains(u) { return }
            sink(event)
        } }
        return []
    }

    // MARK: DiscreteEventWorld

    public func nextEventTime() -> Int64? { core.sim.withLock { $0.nextEventTime } }

    public func runNextEvent(at timeMs: Int64) {
        let events = core.sim.withLock { sim -> [ScenarioSimEvent] in
            sim.runNextEvent(at: timeMs)
            return sim.takeEvents()
        }
        core.deliver(events)
    }

    // MARK: What it cannot run

    /// Why `scenario` cannot run on simulated time, nil when it can: for each thing the simulation
    /// lacks, the first step that needs it (joined by "; "), so the refusal shows everything a
    /// scenario is missing, not just its first gap (a doorbell scenario may need data points and
    /// also camera media: a snapshot, a left message's MP4, video frames).
    public static func unsupported(_ scenario: Scenario, appMode: AppMode) -> String? {
        if appMode == .external { return "--app external needs a broker a real app can reach; the simulated world has none" }
        var reasons: [String] = []
        var lacks: Set<Lack> = []
        if scenario.devices.profile.power.lowPower {
            lacks.insert(.power)
            reasons.append("the profile is a low-power device, and sleep and wake (PROTOCOL.md 8.4) are not simulated")
        }
        for step in scenario.allSteps {
            guard let lack = unsupported(step.kind), lacks.insert(lack).inserted else { continue }
            reasons.append("\(step.title) \(lack.why)")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// What the simulation does not have. Media comes from the device's camera (PROTOCOL.md 8.5):
    /// a data point naming a snapshot or a message is only reported once the file is written.
    private enum Lack: Hashable {
        case frames, snapshot, message, dataPoints, power

        var why: String {
            switch self {
            case .frames: "needs decoded video frames; the simulated P2P links carry none"
            case .snapshot: "needs a snapshot taken from the camera (DP 154, 185 or 115 names it); the simulation has no camera"
            case .message: "needs a left message's MP4 recorded from the camera (DP 212 ipc_leave_msg names it); the simulation has no camera"
            case .dataPoints: "needs data points (PROTOCOL.md 8.3), which the simulation does not run"
            case .power: "needs the power machine (PROTOCOL.md 8.4: sleep and wake), which the simulation does not run"
            }
        }
    }

    private static let snapshotDPs: Set<DPId> = [DataPointCatalogue.doorbellPicture, DataPointCatalogue.alarmMessage,
                                                 DataPointCatalogue.motionPicture]

    private static func unsupported(_ kind: StepKind) -> Lack? {
        switch kind {
        case .wait(let c, _), .expect(let c, _):
            switch c {
            case .videoStarted, .frames: return .frames
            case .doorbell(.dataPoint(let id, _, let alert)):
                if snapshotDPs.contains(id) { return .snapshot }
                if alert == "ipc_leave_msg" { return .message }
                return .dataPoints
            case .doorbell(.power): return .power
            default: return nil
            }
        case .doorbell(.leaveMessage): return .message
        case .doorbell(.motion): return .snapshot
        case .doorbell(.wake): return .power
        case .doorbell(.battery), .doorbell(.setDataPoints): return .dataPoints
        default:
            return nil
        }
    }
}

/// The simulation behind its lock, and where its events go. Every call runs under the lock and
/// hands the events it made to the run outside it, in order.
final class SimulationCore: Sendable {
    let sim: Mutex<ScenarioSimulation>
    let sink = Mutex<(@Sendable (WorldEvent) -> Void)?>(nil)

    init(_ sim: sending ScenarioSimulation) { self.sim = Mutex(sim) }

    /// Runs `body` on the simulation; its events go to the sink, then its result (or error) returns.
    func run<T: Sendable>(_ body: (ScenarioSimulation) throws(CallActionError) -> T) throws -> T {
        let (result, events) = sim.withLock { s -> (Result<T, CallActionError>, [ScenarioSimEvent]) in
            let r: Result<T, CallActionError>
            do throws(CallActionError) { r = .success(try body(s)) } catch { r = .failure(error) }
            return (r, s.takeEvents())
        }
        deliver(events)
        return try result.get()
    }

    func read<T: Sendable>(_ body: (ScenarioSimulation) -> T) -> T { sim.withLock { body($0) } }

    func deliver(_ events: [ScenarioSimEvent]) {
        guard !events.isEmpty, let sink = sink.withLock({ $0 }) else { return }
        for e in events { sink(Self.worldEvent(e)) }
    }

    /// The simulation's event as `Device` or `AppUser` reports it.
    static func worldEvent(_ e: ScenarioSimEvent) -> WorldEvent {
        switch e {
        case .device(let devId, let d):
            let event: DeviceEvent
            switch d {
            case .sent(let m): event = .sent(m)
            case .received(let m): event = .received(m)
            case .ringing(let s): event = .ringing(sessionId: s)
            case .ringingStopped(let s): event = .ringingStopped(sessionId: s)
            case .callEnded(let r): event = .callEnded(r)
            case .refused(let why): event = .refused(why: why)
            case .offerRefused(let s, let from, let why): event = .offerRefused(sessionId: s, from: from, why: why)
            case .connection(let up, let detail): event = .connection(connected: up, detail: detail)
            case .sentDoorbell(let m): event = .sentDoorbell(m)
            case .receivedDoorbell(let m): event = .receivedDoorbell(m)
            case .pressed(let id): event = .pressed(callId: id)
            }
            return .device(devId, event)
        case .user(let userId, let u):
            let event: AppEvent
            switch u {
            case .sent(let m, let devId): event = .sent(m, devId: devId)
            case .received(let m, let devId): event = .received(m, devId: devId)
            case .incomingCall(let s, let devId): event = .incomingCall(sessionId: s, devId: devId)
            case .deviceRinging(let s, let devId): event = .deviceRinging(sessionId: s, devId: devId)
            case .callEnded(let r): event = .callEnded(r)
            case .refused(let why): event = .refused(why: why)
            case .signal(let s, let devId): event = .signal(s, devId: devId)
            case .doorbellPressed(let p): event = .doorbellPressed(p)
            case .doorbellRinging(let devId, let callId, let atMs): event = .doorbellRinging(devId: devId, callId: callId, atMs: atMs)
            case .doorbellSent(let m): event = .doorbellSent(m)
            case .doorbellReceived(let m): event = .doorbellReceived(m)
            }
            return .app(userId, event)
        }
    }
}
