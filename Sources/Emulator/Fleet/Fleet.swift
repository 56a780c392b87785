import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import Synchronization
import MQTTTransport

/// Many devices in one process (`ipcemu fleet`; DESIGN.md "Scale"). Every device is a full
/// `Device`: its own MQTT connection (client id, last will, retained presence and meta), engine,
/// answer policy, timers, payload protection and replay state. They share a few MQTT loop threads.
///
/// Start-up is paced: at most `window` devices are connecting (not yet online) at once, the next
/// starting as one comes online (and at most `connectRate` per second when given), so the broker's
/// accept queue never overflows and no client waits out a TCP retransmission.
/// Before each wave the descriptor budget is checked; a fleet that would run out stops growing
/// and says what it needed and the limit (`FleetStartReport.shortage`), never a crash or a loop.
public final class Fleet: Sendable {
    public struct Options: Sendable {
        /// The broker: host, port, TLS files (credentials and client id come from each profile).
        public var connection: MQTTClientOptions
        /// Every broker of the fleet, in list order (`--broker` given a list), each with the
        /// options of `connection`; a device uses the one `FleetBrokerList` hashes its devId to.
        /// Empty: `connection` only.
        public var brokers: [MQTTClientOptions] = []
        /// MQTT loop threads (default 2: this machine's cores).
        public var threads: Int
        /// Devices started per second; nil: as fast as the broker brings them online, `window`
        /// at a time.
        public var connectRate: Double?
        /// Devices that may be connecting (not yet online) at once towards each broker: keep it
        /// below the broker's listen backlog (mosquitto's is 100), or dropped SYNs cost 1 s
        /// retransmissions each.
        public var window: Int
        /// Overrides every profile's answer policy (`--answer`).
        public var answerPolicy: DeviceProfile.AnswerPolicy?
        /// Local addresses to spread connections over (`--source-ip`), round robin.
        public var sourceAddresses: [String]
        /// Descriptors kept free for the runtime.
        public var descriptorReserve: Int
        public var log: EventLog
        /// Overrides `power.sleepAfter` of every low-power profile (`--sleep-after`; PROTOCOL.md 8.4).
        public var sleepAfter: Double?
        /// Overrides `power.wakeLatency` of every low-power profile (`--wake-latency`).
        public var wakeLatency: Double?

        public init(connection: MQTTClientOptions, threads: Int = 2, connectRate: Double? = nil, window: Int = Fleet.defaultWindow,
                    answerPolicy: DeviceProfile.AnswerPolicy? = nil, sourceAddresses: [String] = [],
                    descriptorReserve: Int = DescriptorBudget.defaultReserve, log: EventLog = EventLog(minimumLevel: .error),
                    sleepAfter: Double? = nil, wakeLatency: Double? = nil) {
            self.connection = connection
            self.threads = threads
            self.connectRate = connectRate
            self.window = window
            self.answerPolicy = answerPolicy
            self.sourceAddresses = sourceAddresses
            self.descriptorReserve = descriptorReserve
            self.log = log
            self.sleepAfter = sleepAfter
            self.wakeLatency = wakeLatency
        }
    }

    /// Devices connecting at once by default (below mosquitto's listen backlog of 100).
    public static let defaultWindow = 64

    public let plan: FleetPlan
    /// The positions of `plan` this process holds.
    public let positions: Range<Int>
    public let options: Options
    public let eventLoop: MQTTEventLoop
    /// Every device's call timers, in one heap (the fleet's own `TimerScheduler` unless the
    /// initialiser was given a scheduler: a `SimulatedClock` in a test or the simulator).
    public let timers: any TimerScheduling
    /// The scheduler the fleet made itself (stopped with the fleet).
    private let ownTimers: TimerScheduler?
    private let state = FleetState()
    /// Wakes asked of the fleet (`wakeRandom`) and how long each took (Fleet+Power.swift).
    let wakeStats = FleetWakeStats()
    /// The reconnect storm under way and the last one's report (FleetReconnectStorm.swift).
    let storms = FleetStormState()
    /// One per group of the plan, with the fleet's overrides: what its devices share (made on
    /// the group's first device; docs/fleet.md "Memory per device").
    private let templates: Mutex<[Int: DeviceTemplate]> = Mutex([:])
    /// The clock, timers, feeds, link factory and log every device of the fleet runs on (one object).
    private let runtime: DeviceRuntime

    public init(plan: FleetPlan, positions: Range<Int>, options: Options, timers: (any TimerScheduling)? = nil) throws {
        let own = timers == nil ? TimerScheduler(name: "fleet-timers") : nil
        let scheduler = timers ?? own ?? TimerScheduler.shared
        self.timers = scheduler
        self.ownTimers = own
        self.plan = plan
        self.positions = positions.clamped(to: 0..<plan.total)
        var options = options
        // Resolve the broker's name once for the whole fleet, not once per connection (TLS keeps
        // the name: the certificate is checked against it).
        if options.connection.tls == nil, let address = Fleet.resolve(options.connection.host) {
            options.connection.host = address
        }
        for i in options.brokers.indices where options.brokers[i].tls == nil {
            if let address = Fleet.resolve(options.brokers[i].host) { options.brokers[i].host = address }
        }
        self.options = options
        self.runtime = DeviceRuntime(log: options.log, timers: scheduler)
        self.eventLoop = try MQTTEventLoop(threads: max(1, min(options.threads, 64)), name: "fleet")
    }

    /// The devices made so far, in position order.
    public var devices: [Device] { state.snapshot.devices }

    /// The device with this id, if this process holds it.
    public func device(_ devId: String) -> Device? { state.snapshot.byId[devId] }

    /// Makes and connects every device, calling `progress` about every `progressInterval`;
    /// returns when all are online, start-up stalled for `stallTimeout`, or descriptors ran out.
    public func start(progressInterval: Duration = .seconds(1), stallTimeout: Duration = .seconds(60),
                      progress: @escaping @Sendable (FleetProgress) -> Void = { _ in }) async -> FleetStartReport {
        let clock = ContinuousClock()
        let began = clock.now
        let total = positions.count
        var shortage: String?
        var failures: [String] = []
        var lastProgress = began
        var position = positions.lowerBound
        let online = Counter()

        func report(_ done: Bool) {
            let now = clock.now
            guard done || now - lastProgress >= progressInterval else { return }
            lastProgress = now
            progress(FleetProgress(online: online.value, started: position - positions.lowerBound, total: total,
                                   elapsed: now - began))
        }

        // A sliding window: at most `window` devices connecting (not yet online) at once, the next
        // one started as soon as one comes online. The window stays below the broker's accept
        // backlog (mosquitto listens with a backlog of 100): past it the kernel drops SYNs and each
        // dropped client waits a whole 1 s TCP retransmission, which made start-up come in waves.
        // The window is per broker: devices spread over the brokers by the hash of their devId,
        // so `window` per broker is about `window` times the brokers in all (each broker's backlog
        // is its own).
        let window = max(1, options.window) * max(1, options.brokers.count)
        let batch = max(1, options.connectRate.map { max(1, Int($0 / 10)) } ?? window)
        // The descriptor budget is read from /proc/self/fd (a listing of every open descriptor, so
        // not once per batch at 10,000 devices): again every 2,000 devices, or when it runs short.
        var budget = DescriptorBudget.current(reserve: options.descriptorReserve)
        var fit = budget.clientsThatFit
        var sinceCheck = 0
        await withTaskGroup(of: Bool.self) { group in
            var connecting = 0
            func settleOne() async {
                guard let up = await group.next() else { return }
                connecting -= 1
                if up { online.add(1) }
                report(false)
            }
            while position < positions.upperBound {
                let batchStart = clock.now
                let count = min(batch, positions.upperBound - position)
                // Descriptor budget: never start clients the process cannot hold.
                if sinceCheck >= 2000 || fit < 2 * count {
                    budget = DescriptorBudget.current(reserve: options.descriptorReserve)
                    fit = budget.clientsThatFit
                    sinceCheck = 0
                }
                let fitting = min(count, fit)
                fit -= fitting
                sinceCheck += fitting
                if fitting < count {
                    shortage = budget.shortage(clients: positions.upperBound - position)
                        + " (\(position - positions.lowerBound) of \(total) devices started)"
                }
                for p in position..<(position + fitting) {
                    while connecting >= window { await settleOne() }
                    do {
                        let device = try makeDevice(at: p)
                        try await device.start()
                        state.add(device)
                        connecting += 1
                        group.addTask { await device.waitUntilConnected(timeout: stallTimeout) }
                    } catch {
                        if failures.count < 20 { failures.append("device at position \(p): \(error)") }
                    }
                }
                position += fitting
                if let rate = options.connectRate, rate > 0 {
                    let due = batchStart + .milliseconds(Int64(Double(count) / rate * 1000))
                    if clock.now < due { try? await Task.sleep(until: due, clock: clock) }
                }
                report(false)
                if shortage != nil { break }   // the devices that fit are up; say why the rest are not
            }
            while connecting > 0 { await settleOne() }
        }
        report(true)
        return FleetStartReport(planned: total, started: state.snapshot.devices.count, online: online.value,
                                elapsed: clock.now - began, shortage: shortage, failures: failures)
    }

    /// A profile with the fleet's overrides (`--answer`, `--sleep-after`, `--wake-latency`).
    private func overridden(_ profile: DeviceProfile) -> DeviceProfile {
        var profile = profile
        if let policy = options.answerPolicy { profile.behaviour.answerPolicy = policy }
        if profile.power.lowPower {
            if let s = options.sleepAfter { profile.power.sleepAfter = s }
            if let l = options.wakeLatency { profile.power.wakeLatency = l }
        }
        return profile
    }

    /// The shared part of the devices of group `index` (made once).
    private func template(group index: Int) throws -> DeviceTemplate {
        if let made = templates.withLock({ $0[index] }) { return made }
        let made = try DeviceTemplate(overridden(plan.groups[index].profile))
        return templates.withLock { templates in
            if let other = templates[index] { return other }
            templates[index] = made
            return made
        }
    }

    private func makeDevice(at position: Int) throws -> Device {
        let profile = overridden(try plan.profile(at: position))
        let template = try plan.group(at: position).map { try self.template(group: $0) }
        var connection = options.connection(for: profile.identity.devId)
        connection.clientID = profile.identity.devId
        if !options.sourceAddresses.isEmpty {
            connection.bindAddress = options.sourceAddresses[position % options.sourceAddresses.count]
        }
        if let cert = profile.broker.certFile, let key = profile.broker.keyFile, var tls = connection.tls {
            tls.certFile = cert
            tls.keyFile = key
            connection.tls = tls
        }
        return try Device(profile: profile, template: template, connection: connection, eventLoop: eventLoop,
                          runtime: runtime)
    }

    /// Devices online now.
    public func onlineCount() async -> Int {
        var count = 0
        for device in devices where await device.status.connected { count += 1 }
        return count
    }

    /// Ends every call per PROTOCOL.md 3.3 and publishes every retained offline status, all devices
    /// at once; returns how long it took. No task per device: a few tasks walk the devices
    /// (`Device.beginStop`: calls ended, offline status written; its PUBACK sends DISCONNECT from
    /// the loop thread), then wait for each connection to close (`Device.finishStop`, at once for
    /// most by then); the loop's shutdown frees the clients (docs/fleet.md "SIGTERM").
    @discardableResult
    public func stop(timeout: Duration = .milliseconds(1500)) async -> Duration {
        let clock = ContinuousClock()
        let began = clock.now
        let all = devices
        replaceStorm(with: nil)?.cancel()
        let walkers = max(1, min(eventLoop.threadCount, all.count))
        await Self.walk(all, walkers: walkers) { await $0.beginStop(timeout: timeout) }
        await Self.walk(all, walkers: walkers) { await $0.finishStop(timeout: timeout) }
        eventLoop.shutdown()
        ownTimers?.shutdown()
        return clock.now - began
    }

    /// Calls `step` on every device, `walkers` tasks each taking every `walkers`-th device in turn:
    /// a few tasks for the whole fleet instead of one per device.
    private static func walk(_ all: [Device], walkers: Int,
                             _ step: @escaping @Sendable (Device) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for walker in 0..<walkers {
                group.addTask {
                    for index in stride(from: walker, to: all.count, by: walkers) { await step(all[index]) }
                }
            }
        }
    }

    // MARK: Fleet-wide faults (load testers' requests)

    /// A reconnect storm (`startReconnectStorm`): every device drops its MQTT connection without
    /// DISCONNECT (the broker publishes every last will); they come back paced per broker, each
    /// after `seconds` plus up to `jitterSeconds`. Returns the devices dropped.
    @discardableResult
    public func dropAllConnections(seconds: Double, jitterSeconds: Double) async -> Int {
        await startReconnectStorm(seconds: seconds, jitterSeconds: jitterSeconds).devices
    }

    /// Stops heartbeat replies on `fraction` (0...1) of the devices, chosen at random, and restores
    /// them on the rest. Returns how many now suppress them.
    @discardableResult
    public func suppressHeartbeatReplies(fraction: Double) async -> Int {
        let all = devices
        let share = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        let chosen = Set(all.indices.shuffled().prefix(Int((Double(all.count) * share).rounded())))
        options.log.log(.warning, "fleet fault: heartbeat replies suppressed on a share of the devices", fields: [
            ("suppressing", String(chosen.count)), ("devices", String(all.count)), ("fraction", String(share)),
        ])
        for (index, device) in all.enumerated() {
            var faults = await device.faults
            faults.heartbeatRepliesSuppressed = chosen.contains(index)
            await device.setFaults(faults, logLevel: .debug)
        }
        return chosen.count
    }

    /// The numeric address of `host`, looked up once (nil: leave it to libmosquitto).
    static func resolve(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(result) }
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &buffer, socklen_t(buffer.count),
                          nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// How start-up is going.
public struct FleetProgress: Sendable {
    public var online: Int
    public var started: Int
    public var total: Int
    public var elapsed: Duration

    public init(online: Int, started: Int, total: Int, elapsed: Duration) {
        self.online = online
        self.started = started
        self.total = total
        self.elapsed = elapsed
    }
}

/// How start-up went.
public struct FleetStartReport: Sendable {
    public var planned: Int
    public var started: Int
    public var online: Int
    public var elapsed: Duration
    /// Set when descriptors ran out: what was needed and the limit.
    public var shortage: String?
    /// Devices that could not be made (the first few reasons).
    public var failures: [String]

    public init(planned: Int, started: Int, online: Int, elapsed: Duration, shortage: String?, failures: [String]) {
        self.planned = planned
        self.started = started
        self.online = online
        self.elapsed = elapsed
        self.shortage = shortage
        self.failures = failures
    }
}

/// The devices of a fleet, readable from any thread.
final class FleetState: Sendable {
    struct Snapshot {
        var devices: [Device] = []
        var byId: [String: Device] = [:]
    }

    private let current = Mutex(Snapshot())

    var snapshot: Snapshot { current.withLock { $0 } }

    func add(_ device: Device) {
        current.withLock { current in
            current.devices.append(device)
            current.byId[device.devId] = device
        }
    }
}

/// A counter many tasks add to.
public final class Counter: Sendable {
    public init() {}

    private let count = Mutex(0)

    public func add(_ n: Int) { count.withLock { $0 += n } }

    public func set(_ n: Int) { count.withLock { $0 = n } }

    public var value: Int { count.withLock { $0 } }
}
