import CallEngine
import CallRuntime
import Foundation
import Synchronization

/// Sleep and wake across a fleet of low-power doorbells (PROTOCOL.md 8.4; issue 20 item 9): how
/// many are awake, asleep or waking, and wake storms (`wakeRandom`) timed by the devices
/// themselves. Every device's power timers already live in the fleet's one `TimerScheduler`
/// (`Fleet.timers`, given to each `Device`), so sleeping and waking cost no thread or descriptor
/// per device.
extension Fleet {
    /// The power states of this process's low-power devices now.
    public func powerCounts() async -> FleetPowerCounts {
        var counts = FleetPowerCounts()
        // The template's flag: `device.profile` would build each device's whole profile, every
        // second, for every device (3.8% of a 100,000-device reconnect storm's CPU).
        for device in devices where device.template.profile.power.lowPower {
            counts.lowPower += 1
            switch await device.powerState {
            case .awake: counts.awake += 1
            case .asleep: counts.asleep += 1
            case .waking: counts.waking += 1
            }
        }
        return counts
    }

    /// A wake storm: wakes `count` low-power devices chosen at random (without repeats; all of
    /// them when `count` is more), all at once, as a publish on each one's wake topic would
    /// (`Device.wake()`). Returns how many were woken and how many of those were asleep. Each
    /// wake is timed from the request to the device's `wokeUp` (its `wakeLatency` plus the
    /// scheduler's lateness) into `wakeSummary`; one log line says what was asked, one (at info)
    /// what it came to.
    @discardableResult
    public func wakeRandom(_ count: Int) async -> FleetWakeReport {
        let candidates = devices.filter { $0.template.profile.power.lowPower }
        let chosen = Array(candidates.shuffled().prefix(max(0, count)))
        var wereAsleep = 0
        for device in chosen where await device.powerState == .asleep { wereAsleep += 1 }
        options.log.log(.warning, "fleet fault: waking random devices", fields: [
            ("waking", String(chosen.count)), ("asleep", String(wereAsleep)), ("lowPowerDevices", String(candidates.count)),
        ])
        wakeStats.requested(chosen.count)
        let stats = wakeStats
        let log = options.log
        // Every wake is sent before this returns (each device watched first, so its `wokeUp`
        // cannot be missed); the waits for `wokeUp` go on in a task of their own, and the summary
        // line comes when the last of them is awake (or gave up).
        let sent = await withTaskGroup(of: SentWake?.self) { group in
            for device in chosen { group.addTask { await Fleet.sendWake(device) } }
            var out: [SentWake] = []
            for await s in group { if let s { out.append(s) } }
            return out
        }
        Task {
            let clock = ContinuousClock()
            let began = clock.now
            let latencies = await withTaskGroup(of: Double?.self) { group in
                for wake in sent { group.addTask { await wake.awaitAwake() } }
                var out: [Double] = []
                for await latency in group { if let latency { out.append(latency) } }
                return out
            }
            for latency in latencies { stats.completed(latencyMs: latency) }
            let sorted = latencies.sorted()
            let took = clock.now - began
            log.log(.info, "fleet fault: wake storm done", fields: [
                ("woken", String(chosen.count)), ("awake", String(sorted.count)),
                ("p50Ms", FleetWakeStats.format(FleetWakeStats.percentile(sorted, 50))),
                ("p99Ms", FleetWakeStats.format(FleetWakeStats.percentile(sorted, 99))),
                ("seconds", String(format: "%.3f", Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)),
            ])
        }
        return FleetWakeReport(woken: chosen.count, wereAsleep: wereAsleep, lowPowerDevices: candidates.count)
    }

    /// Wakes from this process so far: requested, completed, latency percentiles.
    public var wakeSummary: FleetWakeSummary { wakeStats.summary }

    /// Wakes `device`, watching its events first; nil when it was awake already (a wake is only
    /// activity then: nothing to time).
    static func sendWake(_ device: Device) async -> SentWake? {
        let events = await device.events()
        let began = ContinuousClock.now
        if await device.powerState == .awake { return nil }
        await device.wake()
        return SentWake(events: events, began: began,
                        limit: .milliseconds(device.profile.power.wakeLatencyMs) + .seconds(10))
    }
}

/// A wake sent to one device, and the wait for its `wokeUp`.
struct SentWake: Sendable {
    let events: AsyncStream<DeviceEvent>
    let began: ContinuousClock.Instant
    let limit: Duration

    /// Request -> `wokeUp` in milliseconds, or nil when it did not come within `limit` (the device
    /// stopped, or was gone).
    func awaitAwake() async -> Double? {
        let events = events
        let began = began
        let limit = limit
        return await withTaskGroup(of: Double?.self) { group in
            group.addTask {
                for await event in events {
                    if case .wokeUp = event {
                        let d = ContinuousClock.now - began
                        return Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
                    }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// Low-power devices by power state (PROTOCOL.md 8.4).
public struct FleetPowerCounts: Sendable, Equatable {
    /// Devices whose profile is low-power (the others never sleep and are not counted).
    public var lowPower = 0
    public var awake = 0
    public var asleep = 0
    /// Woken, not awake yet (within their `wakeLatency`).
    public var waking = 0

    public init(lowPower: Int = 0, awake: Int = 0, asleep: Int = 0, waking: Int = 0) {
        self.lowPower = lowPower
        self.awake = awake
        self.asleep = asleep
        self.waking = waking
    }
}

/// What a wake storm did.
public struct FleetWakeReport: Sendable, Equatable {
    public var woken: Int
    public var wereAsleep: Int
    public var lowPowerDevices: Int

    public init(woken: Int, wereAsleep: Int, lowPowerDevices: Int) {
        self.woken = woken
        self.wereAsleep = wereAsleep
        self.lowPowerDevices = lowPowerDevices
    }
}

/// Wakes of a fleet so far.
public struct FleetWakeSummary: Sendable, Equatable {
    public var requested = 0
    public var completed = 0
    /// Request -> awake over the latest wakes (at most `FleetWakeStats.kept`); nil before any.
    public var p50Ms: Double?
    public var p99Ms: Double?
    public var maxMs: Double?
}

/// Counts and a bounded window of wake latencies (memory does not grow with the wakes).
final class FleetWakeStats: Sendable {
    static let kept = 10_000

    private struct State {
        var requested = 0
        var completed = 0
        var latencies: [Double] = []
        var next = 0
    }

    private let state = Mutex(State())

    func requested(_ n: Int) { state.withLock { $0.requested += n } }

    func completed(latencyMs: Double) {
        state.withLock { s in
            s.completed += 1
            if s.latencies.count < Self.kept {
                s.latencies.append(latencyMs)
            } else {
                s.latencies[s.next % Self.kept] = latencyMs
            }
            s.next = (s.next + 1) % Self.kept
        }
    }

    var summary: FleetWakeSummary {
        state.withLock { s in
            let sorted = s.latencies.sorted()
            return FleetWakeSummary(requested: s.requested, completed: s.completed, p50Ms: Self.percentile(sorted, 50),
                                    p99Ms: Self.percentile(sorted, 99), maxMs: sorted.last)
        }
    }

    /// The nearest-rank percentile of sorted samples (nil when empty).
    static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func format(_ ms: Double?) -> String { ms.map { String(format: "%.1f", $0) } ?? "-" }
}
