import Foundation
import Synchronization

/// A run split into independent shards (`ipcemu simulate --jobs N`), one thread each: every shard
/// is a whole world of its own (its share of the devices, users, calls and hostile senders) with a
/// seed derived from the main seed and its index, so a shard is an ordinary run that replays alone
/// (`--jobs N --shard K`, or its own arguments with `--jobs 1`), and the merged report of a seed
/// and a jobs count is the same on every run whatever the threads do.
public enum SimulationShards {
    /// The shard count `jobs` asks for, capped so every shard has a device and a user.
    public static func count(_ config: SimulationConfig, jobs: Int) -> Int {
        max(1, min(jobs, config.devices, config.users))
    }

    /// The worlds of the shards, in shard order. One shard is `config` itself (same seed, same run
    /// as before sharding existed).
    public static func configs(_ config: SimulationConfig, jobs: Int) -> [SimulationConfig] {
        let n = count(config, jobs: jobs)
        if n == 1 { return [config] }
        return (0..<n).map { k in
            SimulationConfig(seed: seed(config.seed, shard: k), calls: share(config.calls, k, n),
                             devices: share(config.devices, k, n), users: share(config.users, k, n),
                             faults: config.faults, maxSteps: config.maxSteps,
                             hostileSenders: share(config.hostileSenders, k, n), trace: config.trace)
        }
    }

    /// Shard `k`'s seed: the main seed and the index mixed (SplitMix64's finaliser), so shards draw
    /// unrelated streams.
    public static func seed(_ seed: UInt64, shard k: Int) -> UInt64 {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15 &* (UInt64(k) &+ 1)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `total` split as evenly as it goes, the first shards taking the remainder.
    static func share(_ total: Int, _ k: Int, _ n: Int) -> Int {
        total / n + (k < total % n ? 1 : 0)
    }

    /// Runs every shard of `config` on its own thread and merges the reports, blocking the calling
    /// thread until the last shard ends: for a command's main thread. From async code use the
    /// `async` variant, which blocks no thread of Swift's cooperative pool. `run` runs one world
    /// (tests plant bugs through it).
    public static func run(_ config: SimulationConfig, jobs: Int,
                           run: @escaping @Sendable (SimulationConfig) -> SimulationReport = { Simulation.run($0) }) -> ShardedReport {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<ShardedReport?>(nil)
        start(config, jobs: jobs, run: run) { report in
            result.withLock { $0 = report }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? ShardedReport(merged: SimulationReport(config: config), shards: [])
    }

    /// Runs every shard of `config` on its own thread and merges the reports; the caller's task
    /// is suspended meanwhile, no thread waits.
    public static func run(_ config: SimulationConfig, jobs: Int,
                           run: @escaping @Sendable (SimulationConfig) -> SimulationReport = { Simulation.run($0) }) async -> ShardedReport {
        await withCheckedContinuation { (c: CheckedContinuation<ShardedReport, Never>) in
            start(config, jobs: jobs, run: run) { c.resume(returning: $0) }
        }
    }

    /// Starts one thread per shard (the one-shard run too: never on the caller's thread); the
    /// thread that finishes last merges the reports in shard order and hands them to `done`.
    private static func start(_ config: SimulationConfig, jobs: Int, run: @escaping @Sendable (SimulationConfig) -> SimulationReport,
                              done: @escaping @Sendable (ShardedReport) -> Void) {
        let configs = configs(config, jobs: jobs)
        let slots = ShardSlots(count: configs.count)
        for (k, shardConfig) in configs.enumerated() {
            let thread = Thread {
                guard slots.put(run(shardConfig), at: k) else { return }
                let reports = slots.all()
                let merged = reports.count == 1 ? reports[0] : SimulationReport(merging: reports, config: config)
                done(ShardedReport(merged: merged, shards: reports))
            }
            // The simulator is not deeply recursive; JSONDecoder's nesting limit wants some room.
            thread.stackSize = 8 << 20
            thread.name = "simulate shard \(k)"
            thread.start()
        }
    }
}

/// A sharded run: the merged report and each shard's own.
public struct ShardedReport: Sendable {
    public var merged: SimulationReport
    public var shards: [SimulationReport]

    public init(merged: SimulationReport, shards: [SimulationReport]) {
        self.merged = merged
        self.shards = shards
    }

    /// The first shard (in shard order) that broke a rule, with its first violation.
    public var firstFailure: (shard: Int, config: SimulationConfig, violation: Violation)? {
        for (k, report) in shards.enumerated() {
            if let v = report.violations.first { return (k, report.config, v) }
        }
        return nil
    }
}

/// Where the shard threads leave their reports.
final class ShardSlots: Sendable {
    private let slots: Mutex<[SimulationReport?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    /// Leaves shard `k`'s report; true for the report that filled the last slot.
    func put(_ report: SimulationReport, at k: Int) -> Bool {
        slots.withLock { s in
            s[k] = report
            return s.allSatisfy { $0 != nil }
        }
    }

    func all() -> [SimulationReport] { slots.withLock { $0.compactMap { $0 } } }
}

extension SimulationReport {
    /// The shards' reports added up (in shard order, so the result does not depend on which
    /// thread finished first).
    init(merging reports: [SimulationReport], config: SimulationConfig) {
        self.init(config: config)
        var outcomes: [String: Int] = [:]
        var hash = StableHash()
        drained = !reports.isEmpty
        for (k, r) in reports.enumerated() {
            steps += r.steps
            callsStarted += r.callsStarted
            startsRefused += r.startsRefused
            callsCompleted += r.callsCompleted
            splitCalls += r.splitCalls
            messagesLeft += r.messagesLeft
            faultedCalls += r.faultedCalls
            pairsChecked += r.pairsChecked
            published += r.published
            delivered += r.delivered
            faults.add(r.faults)
            hostileMessages += r.hostileMessages
            decodeRefusals += r.decodeRefusals
            engineRefusals += r.engineRefusals
            refusalRepliesSent += r.refusalRepliesSent
            refusalRepliesDropped += r.refusalRepliesDropped
            offersRefused += r.offersRefused
            linksOpened += r.linksOpened
            ghostRings += r.ghostRings
            simulatedMs = max(simulatedMs, r.simulatedMs)
            hash.add(Int64(bitPattern: r.traceHash))
            drained = drained && r.drained
            violations += r.violations.map { v in
                var tagged = v
                tagged.shard = reports.count > 1 ? k : nil
                return tagged
            }
            for (name, n) in r.outcomes { outcomes[name, default: 0] += n }
        }
        traceHash = hash.value
        self.outcomes = outcomes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension FaultCounts {
    mutating func add(_ o: FaultCounts) {
        lost += o.lost
        duplicated += o.duplicated
        reordered += o.reordered
        delayed += o.delayed
        disconnects += o.disconnects
        partitions += o.partitions
        clockJumps += o.clockJumps
        wills += o.wills
        lostWhileAway += o.lostWhileAway
        linkFailures += o.linkFailures
        linkBreaks += o.linkBreaks
        linkRecoveries += o.linkRecoveries
    }
}
