import CallEngine
import IPCWire

/// The deterministic simulation of the whole call system (issue 23, docs/simulation.md): devices
/// running the real device-side engines, app users running the real app engines, a broker with
/// QoS 1 semantics and seeded faults, simulated P2P links, a workload and hostile floods, all on
/// one simulated clock driven by one seed. Single-threaded and synchronous: each step pops the
/// earliest event, feeds it to an engine, carries out the effects (scheduling new events) and
/// checks the invariants. Wire messages are encoded and decoded with the real IPCWire codecs.
///
/// The engines are driven directly (not through CallRuntime's `EngineHost`, whose timer scheduler
/// runs a thread on real time): their timer effects become events on the simulated queue.
public final class Simulator<DeviceEngine: SimulatedDeviceEngine> {
    public let config: SimulationConfig
    var rng: SimRandom
    var queue = EventQueue()
    var now: Int64 = SimTime.epochMs
    var devices: [SimDevice<DeviceEngine>] = []
    var users: [SimUser] = []
    var deviceIndex: [String: Int] = [:]
    var userIndex: [String: Int] = [:]
    var ledger = CallLedger()
    var report: SimulationReport
    var step = 0
    var nextToken: UInt64 = 1
    var nextGeneration: UInt64 = 1
    /// Last delivery time per (sender, receiver): MQTT keeps one publisher's order per subscriber.
    var lastDelivery: [Int64: Int64] = [:]
    var usedSessionHashes: Set<UInt64> = []
    /// (side, session) pairs that have ended, hashed: a ring for one of them again is a ghost.
    var endedSessionHashes: Set<UInt64> = []
    var partitions: [Int: [NodeRef]] = [:]
    var nextPartition = 0
    var workloadDone = false
    var stopped = false
    let trace: ((String) -> Void)?
    var hash = StableHash()
    static var p2pPassword: String { "simpass" }

    /// `wrap` turns each device's real engine into the one to run (tests plant bugs this way).
    public init(config: SimulationConfig, trace: ((String) -> Void)? = nil,
                wrap: (DeviceSideEngine) -> DeviceEngine) {
        self.config = config
        self.rng = SimRandom(seed: config.seed)
        self.report = SimulationReport(config: config)
        self.trace = trace
        buildWorld(wrap: wrap)
    }

    /// Runs to the end (every call ended), to `maxSteps`, or to the first violation.
    public func run() -> SimulationReport {
        scheduleWorkload()
        while !stopped, let (time, event) = queue.pop() {
            if let limit = config.maxSteps, step >= limit { break }
            step += 1
            now = max(now, time)
            hash.add(now)
            hash.add(event.kindCode)
            process(event)
        }
        if !stopped, queue.isEmpty {
            report.drained = true
            checkDrained()
        }
        report.steps = step
        report.simulatedMs = now - SimTime.epochMs
        report.traceHash = hash.value
        report.callsCompleted = ledger.completed
        report.splitCalls = ledger.splitCalls
        report.faultedCalls = ledger.faultedCalls
        report.pairsChecked = ledger.pairsChecked
        report.outcomes = ledger.outcomes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return report
    }

    // MARK: The world

    private func buildWorld(wrap: (DeviceSideEngine) -> DeviceEngine) {
        let d = config.devices, u = config.users
        users.reserveCapacity(u)
        for i in 0..<u {
            let id = "u\(i)"
            userIndex[id] = i
            users.append(SimUser(userId: id, call: AppCallEngine(config: AppEngineConfig(userId: id)),
                                 bell: AppDoorbellEngine(config: AppDoorbellConfig(userId: id))))
        }
        devices.reserveCapacity(d)
        for i in 0..<d {
            let devId = "d\(i)"
            deviceIndex[devId] = i
            // Households: users i*U/D ..< (i+1)*U/D (at least one), and now and then a user of
            // another household too (one user, two devices).
            var household: [Int] = []
            let lo = i * u / d, hi = max(lo + 1, (i + 1) * u / d)
            for k in lo..<min(hi, lo + 4) { household.append(k % u) }
            if rng.chance(0.2) {
                let extra = rng.below(u)
                if !household.contains(extra) { household.append(extra) }
            }
            let roll = rng.below(10)
            let kind: DeviceKind = roll < 6 ? .screenIPC : (roll < 8 ? .acDoorbell : .doorbell)
            let names = household.map { "u\($0)" }
            let manual = rng.chance(0.8)
            let engine: DeviceSideEngine
            switch kind {
            case .screenIPC:
                engine = DeviceSideEngine(screenIPC: DeviceEngineConfig(
                    devId: devId, answerPolicy: manual ? .manual : .answerAfter(ms: rng.int(200, 5000)),
                    household: names))
            case .acDoorbell, .doorbell:
                engine = DeviceSideEngine(doorbell: DoorbellEngineConfig(
                    devId: devId, kind: kind.rawValue, household: names, messagesEnabled: rng.chance(0.5)))
            }
            let localKey = "simlocalkey\(String(i % 100_000).padded(5))"
            let secrets = P2PLinkRules.DeviceSecrets(devId: devId, p2pPassword: Self.p2pPassword, localKey: localKey,
                                                     liveView: false)
            let auth = P2PAuth.compute(p2pPassword: Self.p2pPassword, localKey: localKey, devId: devId)
            devices.append(SimDevice(devId: devId, kind: kind, engine: wrap(engine), linkRules: P2PLinkRules(device: secrets),
                                     household: household, manual: manual, auth: auth))
            for user in household { users[user].devices.append(i) }
        }
        for i in 0..<u {
            let ids = Set(users[i].devices.map { "d\($0)" })
            users[i].bell = AppDoorbellEngine(config: AppDoorbellConfig(userId: users[i].userId, devices: ids))
        }
    }

    // MARK: Steps

    private func process(_ event: SimEvent) {
        switch event {
        case .deliver(let packet, let to, let epoch):
            deliver(packet, to: to, epoch: epoch)
        case .timer(let node, let slot, let timer, let token):
            fireTimer(node, slot, timer, token: token)
        case .startCall:
            startNextCall()
        case .human(let node, let slot, let action, let session):
            humanActs(node, slot, action, session: session)
        case .linkUp(let device, let session, let generation):
            linkUp(device: device, session: session, generation: generation)
        case .linkDown(let device, let session, let generation):
            linkDown(device: device, session: session, generation: generation)
        case .fault(let fault):
            injectFault(fault)
        case .hostile(let h):
            hostileBurst(h)
        }
    }

    func schedule(_ event: SimEvent, after delayMs: Int64) {
        queue.push(event, at: now &+ max(0, delayMs))
    }

    /// The time on `node`'s own clock.
    func clock(_ node: NodeRef) -> Int64 {
        switch node {
        case .device(let i): now &+ devices[i].connection.clockOffsetMs
        case .user(let i): now &+ users[i].connection.clockOffsetMs
        case .hostile: now
        }
    }

    func violation(_ rule: String, _ detail: String) {
        report.violations.append(Violation(step: step, timeMs: now, rule: rule, detail: detail))
        note("VIOLATION \(rule): \(detail)")
        stopped = true
    }

    @inline(__always)
    func note(_ text: @autoclosure () -> String) {
        guard let trace else { return }
        trace("step \(step) t=\(SimTime.format(now)) \(text())")
    }

    /// Checks after the queue drained: nothing is left open anywhere.
    private func checkDrained() {
        for (i, device) in devices.enumerated() {
            if let open = device.open { violation("ends-once", "device d\(i) never ended \(open)") }
            if device.engine.phase != .idle { violation("ends-once", "device d\(i) is still \(device.engine.phase.rawValue)") }
            if !device.links.isEmpty { violation("no-orphans", "device d\(i) still has a link for \(device.links[0].session)") }
            if let t = device.engine.armedTimers.first { violation("no-orphans", "device d\(i) still has \(t.timer) armed") }
        }
        for (i, user) in users.enumerated() {
            if let open = user.openCall ?? user.openBell { violation("ends-once", "user u\(i) never ended \(open)") }
            if user.call.phase != .idle || user.bell.phase != .idle {
                violation("ends-once", "user u\(i) is still in a call")
            }
            if let t = user.call.armedTimers.first ?? user.bell.armedTimers.first {
                violation("no-orphans", "user u\(i) still has \(t.timer) armed")
            }
        }
        if ledger.inFlight > 0 { violation("ends-once", "\(ledger.inFlight) calls never ended on every side") }
    }
}

extension Simulator where DeviceEngine == DeviceSideEngine {
    /// The real engines, unchanged.
    public convenience init(config: SimulationConfig, trace: ((String) -> Void)? = nil) {
        self.init(config: config, trace: trace, wrap: { $0 })
    }
}

extension String {
    func padded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Runs the real engines (`Simulator<DeviceSideEngine>`), from inside this module so the optimiser
/// specialises the simulator for them (a generic class used from another module runs unspecialised).
public enum Simulation {
    public static func run(_ config: SimulationConfig, trace: ((String) -> Void)? = nil) -> SimulationReport {
        Simulator(config: config, trace: trace).run()
    }
}
