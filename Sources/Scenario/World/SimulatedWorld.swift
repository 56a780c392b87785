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
/// Video is a model of the stream (frame timing and counters), camera media are names and DPs
/// without files; data points and sleep and wake are the device's own store and power machine.
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
        let core = SimulationCore(ScenarioSimulation(seed: scenario.seed ?? 1), clock: simClock)
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
                                                    liveView: profile.capabilities.liveView),
                video: Self.streams(profile.capabilities.video),
                dataPoints: try DataPointStore(ids: profile.dataPoints.ids, startValues: profile.dataPointStartValues),
                power: PowerConfig(profile: profile), media: Self.media(devId: id.devId, hasCamera: profile.capabilities.video != nil),
                messageSeconds: profile.doorbell.messageSeconds)
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

    /// The simulated camera: the device's own file names, paths and DP values (`DeviceMediaStore`,
    /// `DoorbellMediaDPs`), no file; none without video (the real device cannot take them either).
    private static func media(devId: String, hasCamera: Bool) -> ScenarioSimMedia? {
        guard hasCamera else { return nil }
        return ScenarioSimMedia(
            pressSnapshotName: { DeviceMediaStore.pressSnapshotName(callId: $0) },
            motionSnapshotName: { DeviceMediaStore.motionSnapshotName(unixSeconds: $0) },
            messageName: { DeviceMediaStore.messageName(callId: $0) },
            path: { DeviceMediaStore.apiPath(devId: devId, name: $0) },
            snapshotReference: { DoorbellMediaDPs.snapshotReference(path: $0) },
            doorbellAlarm: { DoorbellMediaDPs.doorbellAlarm(path: $0) })
    }

    /// The profile's main and sub streams, as the simulated links send them (the default main
    /// stream for a profile without video, as `P2PLink` sends it).
    private static func streams(_ video: DeviceProfile.Video?) -> [StreamType: VideoStreamFormat] {
        [.main: video?.main ?? .defaultMain, .sub: video?.sub ?? .defaultMain]
    }

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

    /// Why `scenario` cannot run on simulated time, nil when it can. Every step of the vocabulary
    /// runs simulated (video frames as a model of the stream, data points, sleep and wake, camera
    /// media as names and DPs without files); what is left is a real app: `--app external` needs
    /// a broker a phone can reach.
    public static func unsupported(_ scenario: Scenario, appMode: AppMode) -> String? {
        if appMode == .external { return "--app external needs a broker a real app can reach; the simulated world has none" }
        return nil
    }
}

/// The simulation behind its lock, and where its events go. Every call runs under the lock and
/// hands the events it made to the run outside it, in order.
final class SimulationCore: Sendable {
    let sim: Mutex<ScenarioSimulation>
    let sink = Mutex<(@Sendable (WorldEvent) -> Void)?>(nil)
    /// Told of what changes no world event carries (a video frame), so the waits on it re-check.
    let clock: any ScenarioClock

    init(_ sim: sending ScenarioSimulation, clock: any ScenarioClock) {
        self.sim = Mutex(sim)
        self.clock = clock
    }

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
        var frames = false
        for e in events {
            if let w = Self.worldEvent(e) { sink(w) } else { frames = true }
        }
        // Frames are no event of `AppUser` (its stats count them): one change for the waits on them.
        if frames { clock.changed() }
    }

    /// The simulation's event as `Device` or `AppUser` reports it; nil for a video frame.
    static func worldEvent(_ e: ScenarioSimEvent) -> WorldEvent? {
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
            case .dataPointsReported(let entries): event = .dataPointsReported(entries)
            case .fellAsleep: event = .fellAsleep
            case .wokeUp(let ms): event = .wokeUp(latencyMs: ms)
            case .mediaStored(let name, let path): event = .mediaStored(name: name, path: path)
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
            case .videoFrame: return nil
            case .dpReport(let devId, let dps): event = .dpReport(devId: devId, dps: dps)
            }
            return .app(userId, event)
        }
    }
}
