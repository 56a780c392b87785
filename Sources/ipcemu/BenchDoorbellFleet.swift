import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Synchronization

/// What phase (d) of `bench doorbell` saw.
struct DoorbellFleetResult {
    var devices = 0
    var online = 0
    var processes = 1
    var onlineSeconds = 0.0
    var asleepSeen = 0
    /// From the fleet's online line until every device was seen asleep (DP 149 false).
    var asleepSeconds = 0.0
    var wakeLatencyMs = 0.0
    var rate = 0.0
    var seconds = 0.0
    var sent = 0
    var awake = 0
    var lost = 0
    /// Wakes due while no sleeping device was free (not sent).
    var skipped = 0
    var wakeToAwake: [Double] = []
    var rssAtOnline = 0
    var rssAfter = 0
    var fdsAtOnline = 0
    var fdsAfter = 0
    var exitSeconds = -1.0
    var exitStatus = -1

    var json: [String: Any] {
        var s = DoorbellBenchResult.stats(wakeToAwake)
        s["p99OverWakeLatency"] = Percentiles(wakeToAwake).at(99) - wakeLatencyMs
        return ["devices": devices, "online": online, "processes": processes, "onlineSeconds": onlineSeconds,
                "asleepSeen": asleepSeen, "asleepSeconds": asleepSeconds, "wakeLatencyMs": wakeLatencyMs,
                "wakesPerSecond": rate, "seconds": seconds, "sent": sent, "awake": awake, "lost": lost, "skipped": skipped,
                "wakeToAwakeMs": s, "rssBytesAtOnline": rssAtOnline, "rssBytesAfterWakes": rssAfter,
                "rssBytesPerDeviceAtOnline": devices > 0 ? rssAtOnline / devices : 0,
                "rssBytesPerDeviceAfterWakes": devices > 0 ? rssAfter / devices : 0,
                "descriptorsAtOnline": fdsAtOnline, "descriptorsAfterWakes": fdsAfter,
                "exitSeconds": exitSeconds, "exitStatus": exitStatus]
    }
}

/// Phase (d): `ipcemu fleet` of battery doorbells in its own process on the bench's broker; every
/// device seen asleep first, then wakes at a steady rate to random sleeping devices, published on
/// `m/w/{devId}` (the CRC32 of the localKey, PROTOCOL.md 8.4) and timed to the DP 149 `true` on the
/// device's out topic, as an app would see it.
struct DoorbellFleetBench {
    let command: BenchCommand.Doorbell
    let broker: MosquittoBroker

    func run() async throws -> DoorbellFleetResult {
        let count = command.fleet
        let template = try loadProfile(command.fleetProfile)
        guard template.power.lowPower else {
            throw ValidationError("--fleet-profile must be low-power (power.lowPower: true)")
        }
        let plan = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: count)])
        var devices: [WakeLoad.Target] = []
        devices.reserveCapacity(count)
        for position in 0..<count {
            let p = try plan.profile(at: position)
            guard p.security == .plain else {
                throw ValidationError("--fleet-profile must use security: plain (the bench reads the out topics)")
            }
            devices.append(WakeLoad.Target(devId: p.identity.devId, outTopic: p.resolvedTopics.out,
                                           wakePayload: WakeCheck.payload(localKey: Array(p.identity.localKey.utf8))))
        }
        var result = DoorbellFleetResult()
        result.devices = count
        result.rate = command.wakesPerSecond
        result.seconds = command.seconds
        result.wakeLatencyMs = template.power.wakeLatency * 1000

        let loop = try MQTTEventLoop(threads: 2, name: "bench")
        defer { loop.shutdown() }
        // Listening before the fleet starts: every DP 149 report is seen.
        let load = try await WakeLoad(broker: broker, loop: loop, targets: devices)
        defer { load.close() }

        let fleet = FleetProcess(arguments: [
            "fleet", "--profile", "\(command.fleetProfile):\(count)", "--broker", broker.url,
            "--sleep-after", String(command.fleetSleepAfter), "--threads", String(command.threads), "--json",
        ])
        let clock = ContinuousClock()
        let spawned = clock.now
        try fleet.start()
        guard let online = await fleet.waitForOnline(timeout: .seconds(180)) else {
            fleet.kill()
            throw ValidationError("the fleet did not report online within 180 s; its output:\n\(fleet.failureReport)")
        }
        let onlineAt = clock.now
        result.onlineSeconds = BenchCommand.FleetBench.seconds(onlineAt - spawned)
        result.online = online.online
        result.processes = online.processes
        let pid = fleet.process.processIdentifier
        result.rssAtOnline = online.rssBytes
        result.fdsAtOnline = Self.descriptors(pid: pid)

        // Every device asleep (its DP 149 false seen) before the wakes.
        let asleepBy = clock.now + .seconds(command.fleetSleepAfter + 60)
        while load.asleepCount < count, clock.now < asleepBy { try? await Task.sleep(for: .milliseconds(20)) }
        result.asleepSeen = load.asleepCount
        result.asleepSeconds = BenchCommand.FleetBench.seconds(clock.now - onlineAt)
        guard result.asleepSeen == count else {
            fleet.signal(SIGTERM)
            _ = await fleet.waitForExit(timeout: .seconds(30))
            throw ValidationError("only \(result.asleepSeen) of \(count) fleet devices reported DP 149 false within \(Int(command.fleetSleepAfter + 60)) s")
        }

        let wakes = await load.run(rate: command.wakesPerSecond, seconds: command.seconds,
                                   drain: .milliseconds(Int64(result.wakeLatencyMs)) + .seconds(5))
        result.sent = wakes.sent
        result.awake = wakes.samples.count
        result.lost = wakes.lost
        result.skipped = wakes.skipped
        result.wakeToAwake = wakes.samples
        result.rssAfter = ProcessMemory.residentBytes(pid: pid) ?? 0
        result.fdsAfter = Self.descriptors(pid: pid)

        let stopSent = clock.now
        fleet.signal(SIGTERM)
        let status = await fleet.waitForExit(timeout: .seconds(30))
        result.exitSeconds = status != nil ? BenchCommand.FleetBench.seconds(clock.now - stopSent) : -1
        result.exitStatus = status.map { Int($0) } ?? -1
        if status == nil { fleet.kill() }
        return result
    }

    /// Open descriptors of process `pid` (0 when unreadable).
    static func descriptors(pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

/// Wakes random sleeping devices at a steady rate and times each wake to its DP 149 `true`. A
/// device's state comes from its own reports (DP 149 false: asleep; true: awake); a device is woken
/// again only once it was seen asleep again.
final class WakeLoad: Sendable {
    struct Target: Sendable {
        var devId: String
        var outTopic: String
        var wakePayload: [UInt8]
    }

    struct Result {
        var sent = 0
        var lost = 0
        var skipped = 0
        var samples: [Double] = []
    }

    private struct State {
        var asleep: Set<Int> = []
        var pending: [Int: ContinuousClock.Instant] = [:]
        var result = Result()
    }

    let targets: [Target]
    private let index: [String: Int]
    private let senders: [MQTTClient]
    private let receiver: MQTTClient
    private let state = Mutex(State())

    init(broker: MosquittoBroker, loop: MQTTEventLoop, targets: [Target]) async throws {
        self.targets = targets
        var index: [String: Int] = [:]
        for (i, t) in targets.enumerated() { index[t.outTopic] = i }
        self.index = index
        var clients: [MQTTClient] = []
        for k in 0..<4 {
            var options = broker.clientOptions(clientID: "bench-waker-\(k)")
            options.maxInflightMessages = 1000
            let c = try MQTTClient(options: options, eventLoop: loop)
            c.connect()
            clients.append(c)
        }
        senders = clients
        var options = broker.clientOptions(clientID: "bench-dp-listener")
        options.maxInflightMessages = 1000
        receiver = try MQTTClient(options: options, eventLoop: loop)
        receiver.setMessageHandler { [weak self] in self?.received($0) }
        receiver.connect()
        for c in senders + [receiver] {
            guard await c.waitUntilConnected(timeout: .seconds(10)) else {
                throw ValidationError("a bench client could not connect to \(broker.url)")
            }
        }
        // The out topics of the default layout share one filter; others are subscribed one by one.
        let filters = Set(targets.map { Self.filter(for: $0) })
        for f in filters { try await receiver.subscribeAndWait(f, qos: 1, timeout: .seconds(10)) }
    }

    /// `smart/device/out/+` for `smart/device/out/{devId}`; the topic itself otherwise.
    static func filter(for target: Target) -> String {
        let suffix = "/" + target.devId
        guard target.outTopic.hasSuffix(suffix) else { return target.outTopic }
        return String(target.outTopic.dropLast(target.devId.count)) + "+"
    }

    var asleepCount: Int { state.withLock { $0.asleep.count } }

    func close() {
        for c in senders + [receiver] { c.close() }
    }

    /// `rate` wakes a second for `seconds`, then up to `drain` for the last ones to wake.
    func run(rate: Double, seconds: Double, drain: Duration) async -> Result {
        let clock = ContinuousClock()
        let began = clock.now
        let end = began + .milliseconds(Int64(seconds * 1000))
        let total = max(1, Int((rate * seconds).rounded(.up)))
        var due = 0
        var serial = 0
        var rng = SystemRandomNumberGenerator()
        while due < total, clock.now < end + .seconds(1) {
            let target = clock.now >= end ? total : min(total, Int(BenchCommand.FleetBench.seconds(clock.now - began) * rate))
            while due < target {
                due += 1
                guard let device = pick(using: &rng) else {
                    state.withLock { $0.result.skipped += 1 }
                    continue
                }
                let t = targets[device]
                do {
                    try senders[serial % senders.count].publish(topic: WakeCheck.topic(devId: t.devId), payload: t.wakePayload,
                                                                qos: 1, retain: false)
                } catch {
                    state.withLock { $0.pending[device] = nil; $0.result.sent -= 1; $0.result.skipped += 1 }
                }
                serial += 1
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let drainEnd = clock.now + drain
        while clock.now < drainEnd, state.withLock({ !$0.pending.isEmpty }) { try? await Task.sleep(for: .milliseconds(10)) }
        return state.withLock { s in
            var r = s.result
            r.lost = s.pending.count
            return r
        }
    }

    /// A random device seen asleep and not being woken; marks it pending (timed from now).
    private func pick(using rng: inout SystemRandomNumberGenerator) -> Int? {
        let now = ContinuousClock.now
        return state.withLock { s in
            guard !s.asleep.isEmpty else { return nil }
            // Random probes first (cheap: most devices sleep); a scan of the set as the fallback.
            var chosen: Int?
            for _ in 0..<32 {
                let i = Int.random(in: 0..<targets.count, using: &rng)
                if s.asleep.contains(i) { chosen = i; break }
            }
            guard let device = chosen ?? s.asleep.randomElement(using: &rng) else { return nil }
            s.asleep.remove(device)
            s.pending[device] = now
            s.result.sent += 1
            return device
        }
    }

    private func received(_ m: MQTTMessage) {
        let now = ContinuousClock.now
        guard let device = index[m.topic],
              case .dpReport(let report)? = try? InboundMessage.decode(payload: m.payload).message,
              let awake = report.dps.first(where: { $0.id == DataPointCatalogue.awake })?.value else { return }
        state.withLock { s in
            if awake == .bool(false) {
                s.asleep.insert(device)
            } else if awake == .bool(true) {
                s.asleep.remove(device)
                if let sentAt = s.pending.removeValue(forKey: device) {
                    let d = now - sentAt
                    s.result.samples.append(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
                }
            }
        }
    }
}
