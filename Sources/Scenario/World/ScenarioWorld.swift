import AppSimulator
import CallEngine
import Emulator
import IPCWire

/// Who plays the app side of a run.
public enum AppMode: String, Sendable, CaseIterable {
    /// Our app simulator (`AppUser`): the scenario drives both sides and also checks ipcemu itself.
    case simulated
    /// A real phone app under test: the scenario drives and observes the device side only.
    case external
}

/// The device side as the scenario engine sees it. The engine knows nothing else about devices:
/// an in-process `Device` (`InProcessWorld`) is one implementation; a device behind the control
/// API would be another.
public protocol ScenarioDeviceDriver: AnyObject, Sendable {
    var devId: String { get }
    /// Presses the doorbell; returns the session id.
    func press(targets: [String], callType: CallType?, timeoutSeconds: Double?) async throws -> String
    func answer() async throws
    func reject() async throws
    func cancel() async throws
    func hangUp() async throws
    func setAnswerPolicy(_ policy: AnswerPolicy) async throws
    func inject(_ fault: ScenarioFault) async throws
    func phase() async -> CallPhase
    func isConnected() async -> Bool
    /// Video frames sent on each open P2P link, by session.
    func framesSent() async -> [String: Int]
    /// Every event from now on (the engine records them on its timeline).
    func events() async -> AsyncStream<DeviceEvent>

    // PROTOCOL.md 8 (docs/scenarios.md, "Doorbells")
    /// True for the doorbell kinds (`ac_doorbell`, `doorbell`): a press is a 43 and a `video_doorbell` call.
    var isDoorbell: Bool { get }
    /// The device's DP `id` now (nil when it lacks it).
    func dataPoint(_ id: DPId) async -> DPValue?
    /// `awake`, `asleep` or `waking` (8.4).
    func powerName() async -> String
    /// A motion event (8.5).
    func motion() async throws
    /// Wakes the device as the control API does (8.4).
    func wake() async throws
    /// DP 145 (8.4).
    func setBattery(percent: Int) async throws
    /// The device changes its own DPs (8.3).
    func setDataPoints(_ values: [DPId: DPValue]) async throws
}

/// One simulated app user as the scenario engine sees it.
public protocol ScenarioAppDriver: AnyObject, Sendable {
    var userId: String { get }
    func startCall(devId: String, timeoutSeconds: Double, callType: CallType, channelType: ChannelType) async throws -> String
    func answer() async throws
    func reject() async throws
    func busy() async throws
    func cancel() async throws
    func hangUp() async throws
    func setIncomingPolicy(_ policy: AnswerPolicy) async throws
    /// Opens the P2P link of `sessionId` to `devId` (PROTOCOL.md 4); `auth` overrides the right value.
    func openVideo(sessionId: String, devId: String, stream: StreamType, auth: String?) async throws
    func videoStats(sessionId: String) async -> VideoStats?
    /// The session of the app's call when the app knows it is answered, else nil.
    func answeredSession() async -> String?
    /// The app's call state.
    func phase() async -> CallPhase
    func events() async -> AsyncStream<AppEvent>

    // PROTOCOL.md 8 (docs/scenarios.md, "Doorbells")
    /// `accept` the doorbell call `callId` of `devId` that rings this phone (8.2).
    func acceptDoorbell(devId: String, callId: String) async throws
    /// `stop` before an accept (8.2).
    func declineDoorbell(devId: String, callId: String) async throws
    /// `stop` after the accept: hangs up (8.2).
    func hangUpDoorbell(devId: String, callId: String) async throws
    /// The doorbell call ringing this phone (or being accepted), if any.
    func ringingDoorbell() async -> String?
    /// The doorbell call this user accepted (the device's `answered` seen), if any.
    func answeredDoorbell() async -> String?
    /// Opens the §4 link of the accepted doorbell call (8.2: `sessionid` = the call id).
    func openDoorbellVideo(stream: StreamType) async throws
    /// Wakes `devId` over its wake topic; returns the latency the app saw, in ms (8.4).
    func wake(devId: String) async throws -> Double
    /// Protocol 5 (8.3).
    func setDPs(devId: String, _ values: [DPId: DPValue]) async throws
}

/// Everything a run drives: the devices (by index, fleet order) and, with the simulated app, the
/// app users by id.
public protocol ScenarioWorld: Sendable {
    var appMode: AppMode { get }
    /// Where the devices are connected (for the report).
    var brokerURL: String { get }
    var devices: [any ScenarioDeviceDriver] { get }
    func app(_ userId: String) -> (any ScenarioAppDriver)?
    /// Stops everything the world started.
    func close() async
    /// The run's time: real (`WallScenarioClock`) or the simulator's (`SimulatedScenarioClock`).
    var clock: any ScenarioClock { get }
    /// Delivers every event of the devices and of the app users `users` to `sink`, in order, from
    /// now on (subscribed before it returns); the tasks it started, if any, for the caller to cancel.
    func observe(users: [String], _ sink: @escaping @Sendable (WorldEvent) -> Void) async -> [Task<Void, Never>]
}

/// Something that happened in the world: what the runner records, and what wakes its waits.
public enum WorldEvent: Sendable {
    case device(String, DeviceEvent)
    case app(String, AppEvent)
}

extension ScenarioWorld {
    /// Over the drivers' event streams: one task per device and app user.
    public func observe(users: [String], _ sink: @escaping @Sendable (WorldEvent) -> Void) async -> [Task<Void, Never>] {
        var tasks: [Task<Void, Never>] = []
        for d in devices {
            let devId = d.devId
            let stream = await d.events()
            tasks.append(Task {
                for await e in stream { sink(.device(devId, e)) }
            })
        }
        for u in users {
            guard let app = app(u) else { continue }
            let stream = await app.events()
            tasks.append(Task {
                for await e in stream { sink(.app(u, e)) }
            })
        }
        return tasks
    }
}

/// A step could not be carried out (an action was refused, a user is unknown, ...).
public struct ScenarioActionError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
