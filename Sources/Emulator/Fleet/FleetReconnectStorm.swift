import Foundation
import MQTTTransport
import Synchronization

/// The back-off between a storm's reconnect attempts of one device: "full jitter" exponential
/// back-off. Retry number k (0-based) waits a uniformly random share of
/// `min(maximumDelay, initialDelay * multiplier^k)`, so devices that failed together do not come
/// back together.
public struct FleetReconnectBackoff: Sendable, Equatable {
    public var initialDelay: Double
    public var maximumDelay: Double
    public var multiplier: Double

    public init(initialDelay: Double = 0.25, maximumDelay: Double = 8, multiplier: Double = 2) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
    }

    /// The most retry `attempt` may wait: `initialDelay * multiplier^attempt`, at most `maximumDelay`.
    public func ceiling(attempt: Int) -> Double {
        let cap = max(0, maximumDelay)
        var delay = min(max(0, initialDelay), cap)
        var step = 0
        while step < attempt, delay < cap {
            delay = min(delay * max(1, multiplier), cap)
            step += 1
        }
        return delay
    }

    /// The wait before retry `attempt`: `unit` (clamped to 0...1) of its ceiling.
    public func delay(attempt: Int, unit: Double) -> Double {
        let u = unit.isFinite ? min(max(unit, 0), 1) : 0
        return ceiling(attempt: attempt) * u
    }

    public func delay<G: RandomNumberGenerator>(attempt: Int, using random: inout G) -> Double {
        delay(attempt: attempt, unit: Double.random(in: 0..<1, using: &random))
    }
}

/// What a reconnect storm came to.
public struct FleetReconnectStormReport: Sendable, Equatable {
    /// Devices dropped.
    public var devices: Int
    /// Devices back online (connected, subscribed, online status published) when it ended.
    public var backOnline: Int
    /// Attempts after a device's first (its attempt timed out; it waited its back-off).
    public var retries: Int
    /// From the drop to the last device back online (or to giving up).
    public var seconds: Double
    public var brokers: Int
    /// Devices connecting at once towards each broker.
    public var window: Int

    public init(devices: Int, backOnline: Int, retries: Int, seconds: Double, brokers: Int, window: Int) {
        self.devices = devices
        self.backOnline = backOnline
        self.retries = retries
        self.seconds = seconds
        self.brokers = brokers
        self.window = window
    }
}

/// A storm under way: how many devices it dropped, and its report once every device is back.
public struct FleetReconnectStorm: Sendable {
    public let devices: Int
    let task: Task<FleetReconnectStormReport, Never>

    public func report() async -> FleetReconnectStormReport { await task.value }
}

/// The fleet's storms: the one running (cancelled by a new storm or by `Fleet.stop`) and the last report.
final class FleetStormState: Sendable {
    private struct State {
        var running: Task<FleetReconnectStormReport, Never>?
        var last: FleetReconnectStormReport?
        var started = 0
        var completed = 0
    }

    private let state = Mutex(State())

    /// Makes `next` the running storm; returns the one it replaces.
    func replace(with next: Task<FleetReconnectStormReport, Never>?) -> Task<FleetReconnectStormReport, Never>? {
        state.withLock { s in
            defer { s.running = next }
            if next != nil { s.started += 1 }
            return s.running
        }
    }

    func finished(_ report: FleetReconnectStormReport) {
        state.withLock {
            $0.last = report
            $0.completed += 1
        }
    }

    var last: FleetReconnectStormReport? { state.withLock { $0.last } }

    var counts: (started: Int, completed: Int) { state.withLock { ($0.started, $0.completed) } }
}

extension Fleet {
    /// A reconnect storm: every device drops its MQTT connection at once without DISCONNECT (the
    /// broker publishes every last will), then the fleet brings them back paced per broker: at most
    /// `options.window` devices connecting towards each broker at once (below its listen backlog,
    /// so no SYN is dropped and no client waits out a TCP retransmission), each starting after
    /// `seconds` plus a random share of `jitterSeconds`. A device not back within `attemptTimeout`
    /// is dropped again and retried after its `backoff` (full jitter, exponential), giving its
    /// place to the next one. Returns once every device is dropped; the storm's report is
    /// logged (info) when all are back online and kept in `lastReconnectStorm`.
    @discardableResult
    public func startReconnectStorm(seconds: Double = 0, jitterSeconds: Double = 0,
                                    backoff: FleetReconnectBackoff = FleetReconnectBackoff(),
                                    attemptTimeout: Duration = .seconds(5), giveUpAfter: Duration = .seconds(300)) async -> FleetReconnectStorm {
        let all = devices
        let window = max(1, options.window)
        let brokerCount = max(1, options.brokers.count)
        let base = seconds.isFinite ? min(max(0, seconds), 86_400) : 0
        let spread = jitterSeconds.isFinite ? min(max(0, jitterSeconds), 3_600) : 0
        // One line for the whole storm; each device's lines at debug.
        options.log.log(.warning, "fleet fault: dropping every device's MQTT connection", fields: [
            ("devices", String(all.count)), ("seconds", String(seconds)), ("jitterSeconds", String(jitterSeconds)),
            ("brokers", String(brokerCount)), ("windowPerBroker", String(window)),
        ])
        replaceStorm(with: nil)?.cancel()
        let clock = ContinuousClock()
        let began = clock.now
        for device in all { await device.dropConnectionForStorm(logLevel: .debug) }
        var random = SystemRandomNumberGenerator()
        var perBroker = [[StormItem]](repeating: [], count: brokerCount)
        for device in all {
            let b = brokerCount > 1 ? FleetBrokerList.index(of: device.devId, brokers: brokerCount) : 0
            let due = base + (spread > 0 ? Double.random(in: 0...spread, using: &random) : 0)
            perBroker[b].append(StormItem(device: device, attempt: 0, due: began + Self.duration(due)))
        }
        let log = options.log
        let task = Task { [weak self] () -> FleetReconnectStormReport in
            let outcomes = await withTaskGroup(of: (back: Int, retries: Int).self) { group in
                for items in perBroker where !items.isEmpty {
                    group.addTask {
                        await Fleet.pace(items, window: window, backoff: backoff, attemptTimeout: attemptTimeout,
                                         giveUpAt: began + giveUpAfter)
                    }
                }
                var sum = (back: 0, retries: 0)
                for await o in group { sum = (sum.back + o.back, sum.retries + o.retries) }
                return sum
            }
            let report = FleetReconnectStormReport(devices: all.count, backOnline: outcomes.back, retries: outcomes.retries,
                                                   seconds: Self.seconds(clock.now - began), brokers: brokerCount, window: window)
            self?.storms.finished(report)
            log.log(report.backOnline == report.devices ? .info : .warning, "fleet fault: reconnect storm done", fields: [
                ("devices", String(report.devices)), ("backOnline", String(report.backOnline)),
                ("retries", String(report.retries)), ("seconds", String(format: "%.3f", report.seconds)),
            ])
            return report
        }
        _ = replaceStorm(with: task)
        return FleetReconnectStorm(devices: all.count, task: task)
    }

    /// The report of the last storm that ended (nil before).
    public var lastReconnectStorm: FleetReconnectStormReport? { storms.last }

    /// Reconnect storms started and completed in this process.
    public var reconnectStormCounts: (started: Int, completed: Int) { storms.counts }

    /// Stops a storm's pacing (a new storm, or `stop()`); returns the storm it replaced.
    func replaceStorm(with next: Task<FleetReconnectStormReport, Never>?) -> Task<FleetReconnectStormReport, Never>? {
        storms.replace(with: next)
    }

    struct StormItem: Sendable {
        let device: Device
        var attempt: Int
        var due: ContinuousClock.Instant
    }

    private enum PaceEvent: Sendable {
        case attempt(StormItem, up: Bool)
        case due
    }

    /// One broker's devices, `window` connecting at once, earliest due first; a device whose
    /// attempt timed out is dropped and queued again after its back-off. Returns how many came
    /// back and how many retries it took.
    static func pace(_ items: [StormItem], window: Int, backoff: FleetReconnectBackoff, attemptTimeout: Duration,
                     giveUpAt: ContinuousClock.Instant) async -> (back: Int, retries: Int) {
        var queue = items.sorted { $0.due < $1.due }
        var next = 0   // queue[next...] waits; retries are inserted in due order
        var back = 0
        var retries = 0
        var random = SystemRandomNumberGenerator()
        await withTaskGroup(of: PaceEvent.self) { group in
            var connecting = 0
            var tick = false
            while !Task.isCancelled {
                let now = ContinuousClock.now
                while connecting < window, next < queue.count, queue[next].due <= now {
                    let item = queue[next]
                    next += 1
                    connecting += 1
                    group.addTask { .attempt(item, up: await attempt(item.device, timeout: attemptTimeout)) }
                }
                if next == queue.count, connecting == 0 { break }
                // Wake for the next due device when there is room for it.
                if !tick, connecting < window, next < queue.count {
                    tick = true
                    let due = queue[next].due
                    group.addTask {
                        try? await Task.sleep(until: due, clock: ContinuousClock())
                        return .due
                    }
                }
                guard let event = await group.next() else { break }
                switch event {
                case .due:
                    tick = false
                case .attempt(var item, let up):
                    connecting -= 1
                    if up {
                        back += 1
                    } else if ContinuousClock.now < giveUpAt {
                        await item.device.dropConnectionForStorm(logLevel: .debug)
                        item.due = ContinuousClock.now + duration(backoff.delay(attempt: item.attempt, using: &random))
                        item.attempt += 1
                        retries += 1
                        let at = queue[next...].partitioningIndex { $0.due > item.due }
                        queue.insert(item, at: at)
                    }
                }
                // Compact what was taken now and then (retries insert into the waiting part).
                if next > 4096, next * 2 > queue.count {
                    queue.removeFirst(next)
                    next = 0
                }
            }
            group.cancelAll()
        }
        return (back, retries)
    }

    /// One attempt: once the old socket is closed (a `connect()` before would join the dying
    /// connection), connect and wait until the device is back online. The drop already marked the
    /// device not ready (`dropConnectionForStorm`), so the wait cannot see the old connection's
    /// readiness; the transport's state is read without a hop to the device.
    static func attempt(_ device: Device, timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while device.client.state == .connected, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        device.client.connect()
        return await device.waitUntilConnected(timeout: timeout)
    }

    static func duration(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds.isFinite ? max(0, min(seconds, 86_400)) : 0) * 1e9))
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

extension Collection {
    /// The first index whose element satisfies `belongs` (every later one must too), by bisection.
    func partitioningIndex(where belongs: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if belongs(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
