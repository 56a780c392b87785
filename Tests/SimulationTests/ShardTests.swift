import CallEngine
import Testing
import TestSupport
@testable import Simulation

/// `--jobs`: a run split into independent worlds on their own threads (docs/simulation.md).
/// CPU-bound for seconds on threads of their own: `.heavy`, so a parallel `swift test` runs a few
/// such at a time and the cooperative pool keeps a share of the two cores (docs/testing.md).
@Suite(.heavy) struct ShardTests {
    /// Two runs of the same seed and jobs give the same report, whatever the threads did. 400
    /// calls (1,200 until 2026-11-27: three runs took 25 s of CI's serial run; the property does
    /// not grow with the run, and this size still injects the fault kinds checked below).
    @Test func sameSeedAndJobsGiveTheSameReport() async {
        let config = SimulationConfig(seed: 4242, calls: 400, devices: 12, users: 36, faults: .all, hostileSenders: 2)
        // The async variant: the shards compute on their own threads, no pool thread waits.
        let a = await SimulationShards.run(config, jobs: 3)
        let b = await SimulationShards.run(config, jobs: 3)
        // The blocking variant (the CLI's), from a thread of its own.
        let twoJobs = await offThePool { SimulationShards.run(config, jobs: 2) }
        #expect(a.shards.count == 3)
        #expect(a.merged.violations.isEmpty, "\(a.merged.violations)")
        #expect(a.merged.drained)
        #expect(a.merged.traceHash == b.merged.traceHash)
        #expect(a.shards.map(\.traceHash) == b.shards.map(\.traceHash))
        #expect(a.merged.steps == b.merged.steps)
        #expect(a.merged.callsStarted == b.merged.callsStarted)
        #expect(a.merged.callsCompleted == b.merged.callsCompleted)
        #expect(a.merged.pairsChecked == b.merged.pairsChecked)
        #expect(a.merged.faults == b.merged.faults)
        #expect(a.merged.hostileMessages == b.merged.hostileMessages)
        #expect(a.merged.outcomes.map(\.0) == b.merged.outcomes.map(\.0))
        #expect(a.merged.outcomes.map(\.1) == b.merged.outcomes.map(\.1))
        // The merge adds the shards up.
        #expect(a.merged.callsStarted == a.shards.map(\.callsStarted).reduce(0, +))
        #expect(a.merged.callsStarted == 400)
        print("shards, same seed: \(a.merged.faults.lines.map { "\($0.0) \($0.1)" }.joined(separator: ", ")); hostile \(a.merged.hostileMessages)")
        // The run is big enough to exercise what it compares: every fault kind that is not rare
        // at this size, and the hostile senders.
        let f = a.merged.faults
        for (kind, count) in [("lost", f.lost), ("duplicated", f.duplicated), ("reordered", f.reordered), ("delayed", f.delayed),
                              ("disconnects", f.disconnects), ("link failures", f.linkFailures)] {
            #expect(count > 0, "no \(kind) fault injected in \(config.calls) calls")
        }
        #expect(a.merged.hostileMessages > 0)
        #expect(a.merged.faults.lost == a.shards.map(\.faults.lost).reduce(0, +))
        // Another jobs count is another split, so another run.
        #expect(twoJobs.merged.traceHash != a.merged.traceHash)
    }

    /// The split: shares add up to the whole, seeds differ per shard, one job is the world itself.
    @Test func theSplitCoversTheWorld() {
        let config = SimulationConfig(seed: 9, calls: 1001, devices: 10, users: 31, faults: .all, hostileSenders: 3)
        let shards = SimulationShards.configs(config, jobs: 4)
        #expect(shards.count == 4)
        #expect(shards.map(\.calls).reduce(0, +) == 1001)
        #expect(shards.map(\.devices).reduce(0, +) == 10)
        #expect(shards.map(\.users).reduce(0, +) == 31)
        #expect(shards.map(\.hostileSenders).reduce(0, +) == 3)
        #expect(Set(shards.map(\.seed)).count == 4)
        #expect(!shards.map(\.seed).contains(9))
        #expect(SimulationShards.configs(config, jobs: 1) == [config])
        // Never more shards than devices or users.
        #expect(SimulationShards.count(SimulationConfig(seed: 1, calls: 5, devices: 2, users: 9), jobs: 8) == 2)
    }

    /// A planted bug found in a sharded run: the failing shard's own world replays to the same
    /// violation alone, and shrinks below 50 steps from there.
    @Test func aFailingShardReplaysAloneAndShrinks() async throws {
        let config = SimulationConfig(seed: 7, calls: 600, devices: 8, users: 24, faults: .all)
        let run: @Sendable (SimulationConfig) -> SimulationReport = {
            Simulator<RingsTwiceWhenBusy>(config: $0, wrap: { RingsTwiceWhenBusy(inner: $0) }).run()
        }
        let sharded = await offThePool { SimulationShards.run(config, jobs: 2, run: run) }
        let failure = try #require(sharded.firstFailure)
        #expect(failure.violation.rule == "busy-rings-once")
        #expect(sharded.merged.violations.first?.shard == failure.shard)
        #expect(failure.config == SimulationShards.configs(config, jobs: 2)[failure.shard])
        // Alone (what `--jobs 2 --shard K` and the shard's own `--jobs 1` arguments run).
        let alone = await offThePool { run(failure.config) }
        #expect(alone.violations.first == failure.violation)
        #expect(alone.traceHash == sharded.shards[failure.shard].traceHash)
        // Shrinking starts from the shard's world as from any run (PlantedBugTests covers how far).
        let shrunk = try #require(await offThePool { Shrinker.shrink(failure.config, run: run) })
        #expect(shrunk.violation.rule == failure.violation.rule)
        let size = { (c: SimulationConfig) in c.calls + c.devices + c.users + c.hostileSenders }
        #expect(size(shrunk.config) < size(failure.config))
        let rerun = await offThePool { [shrunkConfig = shrunk.config] in run(shrunkConfig) }
        #expect(rerun.violations.first == shrunk.violation)
        #expect(shrunk.config.replayArguments.hasSuffix("--jobs 1"))
    }
}
