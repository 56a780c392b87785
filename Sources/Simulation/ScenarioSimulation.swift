import CallEngine
import IPCWire

/// The call system of one scenario on simulated time (`ipcemu scenario run --simulated`,
/// docs/scenarios.md "Simulated time"): the devices and app users a scenario names, each on the
/// real engines (`DeviceSideEngine`, `AppCallEngine`, `AppDoorbellEngine`, `P2PLinkRules`,
/// `RefusalReplyLimiter`), every message through the real IPCWire codecs, on a broker without
/// faults (QoS 1, a fixed 2 ms per hop, order kept) and P2P links that connect a fixed 150 ms after
/// the device accepts the offer. Unlike `Simulator` there is no workload and nobody acts on their
/// own: the scenario's steps are the only actions, and its waits advance the time.
///
/// Single-threaded and synchronous: the caller serialises every call (the scenario world keeps it
/// behind a mutex), asks `nextEventTime`, runs one event with `runNextEvent(at:)` and collects what
/// happened with `takeEvents()`.
public final class ScenarioSimulation {
    /// A fixed start (2026-11-26 00:00 UTC, unix ms): every run reads the same times.
    public static let startMs: Int64 = 1_795_651_200_000
    /// One broker hop.
    public static let hopMs: Int64 = 2
    /// From a device's accepting an offer to the link being up on both sides.
    public static let linkConnectMs: Int64 = 150

    public private(set) var now: Int64 = ScenarioSimulation.startMs
    var queue = ScenarioEventQueue()
    var devices: [ScenarioSimDevice] = []
    var users: [ScenarioSimUser] = []
    var deviceIndex: [String: Int] = [:]
    var userIndex: [String: Int] = [:]
    var rng: SimRandom
    var nextToken: UInt64 = 1
    var events: [ScenarioSimEvent] = []

    public init(seed: UInt64 = 1) {
        rng = SimRandom(seed: seed)
    }

    // MARK: The world

    /// Adds a device; its in topic is subscribed at once.
    public func addDevice(_ setup: ScenarioSimDeviceSetup) {
        let d = devices.count
        deviceIndex[setup.devId] = d
        devices.append(ScenarioSimDevice(setup: setup))
        // Connected: the idle timer starts (PROTOCOL.md 8.4); the DPs reported on connect reach
        // nobody yet (no app reads its topic before the run starts).
        runPower(d, devices[d].power.start(now: now))
    }

    /// Adds an app user who reads the out topics of `devices` (ids added before).
    public func addUser(userId: String, call: AppEngineConfig, doorbell: AppDoorbellConfig, devices reach: [String]) {
        let i = users.count
        userIndex[userId] = i
        var user = ScenarioSimUser(userId: userId, call: AppCallEngine(config: call), bell: AppDoorbellEngine(config: doorbell))
        for devId in reach {
            guard let d = deviceIndex[devId] else { continue }
            user.devices.append(d)
            devices[d].readers.append(i)
        }
        users.append(user)
    }

    // MARK: Time

    /// When the next event is due (unix ms), nil when nothing is scheduled.
    public var nextEventTime: Int64? { queue.nextTime }

    /// Runs the next event, the time being `timeMs` (never earlier than the event's own time).
    public func runNextEvent(at timeMs: Int64) {
        guard let (time, item) = queue.pop() else { return }
        now = max(now, time, timeMs)
        switch item {
        case .deliver(let bytes, let to, let epoch):
            deliver(bytes, to: to, epoch: epoch)
        case .timer(let node, let slot, let timer, let token):
            fire(node, slot, timer, token: token)
        case .linkUp(let d, let session, let user):
            linkUp(device: d, session: session, user: user)
        case .reconnect(let d, let epoch):
            reconnect(d, epoch: epoch)
        case .publish(let d, let bytes):
            publish(bytes: bytes, from: .device(d), topic: .deviceOut(d))
        case .frame(let d, let session, let token):
            sendFrame(device: d, session: session, token: token)
        case .power(let d, let timer, let token):
            powerTimerFired(d, timer, token: token)
        case .media(let d, let job):
            mediaDone(d, job)
        case .wakeTopic(let d, let payload, let epoch):
            wakeTopicDelivered(d, payload: payload, epoch: epoch)
        }
    }

    /// What happened since the last call, in order.
    public func takeEvents() -> [ScenarioSimEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    func schedule(_ item: ScenarioEventQueue.Item, after ms: Int64) {
        queue.push(item, at: now &+ max(0, ms))
    }

    func newToken() -> UInt64 {
        defer { nextToken &+= 1 }
        return nextToken
    }

    // MARK: The broker (no faults)

    enum Node: Equatable {
        case device(Int)
        case user(Int)
    }

    enum Topic {
        case deviceIn(Int)
        case deviceOut(Int)
    }

    func publish(_ envelope: Envelope, from sender: Node, topic: Topic) {
        publish(bytes: envelope.encoded(), from: sender, topic: topic)
    }

    func publish(bytes: [UInt8], from sender: Node, topic: Topic) {
        // A client that is not connected cannot publish (the glue logs it and goes on).
        if case .device(let d) = sender, !devices[d].connected { return }
        switch topic {
        case .deviceIn(let d):
            queue.push(.deliver(bytes, to: .device(d), epoch: devices[d].epoch), at: now &+ Self.hopMs)
        case .deviceOut(let d):
            for u in devices[d].readers { queue.push(.deliver(bytes, to: .user(u), epoch: 0), at: now &+ Self.hopMs) }
        }
    }

    private func deliver(_ bytes: [UInt8], to node: Node, epoch: Int) {
        switch node {
        case .device(let d):
            // Clean session: what was in flight when the connection went is lost.
            guard devices[d].connected, devices[d].epoch == epoch else { return }
            deviceReceives(d, bytes)
        case .user(let u):
            userReceives(u, bytes)
        }
    }

    func decode(_ bytes: [UInt8]) -> Result<InboundMessage, WireError> {
        do throws(WireError) {
            return .success(try InboundMessage.decode(payload: bytes).message)
        } catch {
            return .failure(error)
        }
    }
}

/// The discrete-event queue of a scenario simulation: earliest first, then in the order scheduled.
/// A scenario keeps a handful of events pending, so a sorted array is enough.
struct ScenarioEventQueue {
    enum Item {
        case deliver([UInt8], to: ScenarioSimulation.Node, epoch: Int)
        case timer(ScenarioSimulation.Node, EngineSlot, CallTimer, token: UInt64)
        case linkUp(device: Int, session: String, user: Int)
        case reconnect(device: Int, epoch: Int)
        /// A device's reply published late (the `delayReplies` fault).
        case publish(device: Int, bytes: [UInt8])
        /// The next video frame of a link's stream.
        case frame(device: Int, session: String, token: UInt64)
        /// A timer of a device's power machine (PROTOCOL.md 8.4).
        case power(device: Int, CallTimer, token: UInt64)
        /// A simulated camera job done (a snapshot taken, a message written: 8.5).
        case media(device: Int, ScenarioSimMediaJob)
        /// A publish on a device's wake topic `m/w/{devId}` reaching it.
        case wakeTopic(device: Int, payload: [UInt8], epoch: Int)
    }

    private var items: [(time: Int64, seq: UInt64, item: Item)] = []
    private var nextSeq: UInt64 = 0

    var nextTime: Int64? { items.first?.time }

    mutating func push(_ item: Item, at time: Int64) {
        let entry = (time: time, seq: nextSeq, item: item)
        nextSeq &+= 1
        // After every entry due at or before `time` (ties keep their order).
        var lo = 0, hi = items.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if items[mid].time <= time { lo = mid + 1 } else { hi = mid }
        }
        items.insert(entry, at: lo)
    }

    mutating func pop() -> (Int64, Item)? {
        guard !items.isEmpty else { return nil }
        let first = items.removeFirst()
        return (first.time, first.item)
    }
}
