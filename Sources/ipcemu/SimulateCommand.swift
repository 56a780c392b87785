import ArgumentParser
import Foundation
import Simulation

/// `--faults`: `all`, `none`, or a comma-separated list (loss,dup,reorder,delay,disconnect,
/// partition,clockjump).
struct FaultsOption: ExpressibleByArgument, Sendable {
    let kinds: FaultKinds

    init?(argument: String) {
        guard case .success(let kinds) = FaultKinds.parse(argument) else { return nil }
        self.kinds = kinds
    }

    init(_ kinds: FaultKinds) { self.kinds = kinds }

    var defaultValueDescription: String { kinds.text }

    static var allValueStrings: [String] { ["all", "none"] + FaultKinds.names.map(\.0) }
}

/// `ipcemu simulate`: the deterministic simulation of the whole call system (docs/simulation.md).
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Runs devices, app users and a faulty broker on a simulated clock from one seed, checking the call invariants after every step.",
        discussion: """
        Every run is a function of its seed and options: a failure prints the seed and the shortest \
        failing prefix, and `--replay` prints that run step by step. See docs/simulation.md.
        """
    )

    @Option(help: "The seed (default: a fresh one, printed).")
    var seed: UInt64?

    @Option(help: "Calls to start.")
    var calls: Int = 10_000

    @Option(help: "Simulated devices (screen_ipc, ac_doorbell and doorbell kinds).")
    var devices: Int = 100

    @Option(help: "Simulated app users (households of about users/devices each).")
    var users: Int = 300

    @Option(help: "Faults to inject: all, none, or a comma-separated list of loss, dup, reorder, delay, disconnect, partition, clockjump.")
    var faults: FaultsOption = FaultsOption(.all)

    @Option(help: "Hostile senders flooding devices with messages to refuse (default: devices/100 + 1, at most 8).")
    var hostile: Int?

    @Option(help: "Stop after this many steps (a prefix of the run).")
    var steps: Int?

    @Option(help: "Shards run on their own threads, each an independent world with its share of the devices, users, calls and hostile senders and a seed derived from --seed (default: the active processor count). The same seed and jobs give the same run.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Run only this shard (0-based) of the --jobs split, alone (to replay a shard's failure).")
    var shard: Int?

    @Flag(help: "Print the run step by step.")
    var replay = false

    @Flag(help: "On a violation, do not search for the smallest failing run.")
    var noShrink = false

    func validate() throws {
        guard calls >= 0 else { throw ValidationError("--calls must be 0 or more") }
        guard devices >= 1, devices <= 1_000_000 else { throw ValidationError("--devices must be 1...1000000") }
        guard users >= 1, users <= 3_000_000 else { throw ValidationError("--users must be 1...3000000") }
        if let hostile, hostile < 0 || hostile > 1000 { throw ValidationError("--hostile must be 0...1000") }
        if let steps, steps < 1 { throw ValidationError("--steps must be 1 or more") }
        guard jobs >= 1, jobs <= 256 else { throw ValidationError("--jobs must be 1...256") }
        let shards = SimulationShards.count(worldConfig(seed: 0), jobs: jobs)
        if let shard, shard < 0 || shard >= shards {
            throw ValidationError("--shard must be 0...\(shards - 1) (--jobs \(jobs) makes \(shards) shards of this world)")
        }
        if replay, shard == nil, shards > 1 {
            throw ValidationError("--replay prints one world: add --shard K (0...\(shards - 1)) or --jobs 1")
        }
    }

    /// The whole world the options describe (before sharding).
    private func worldConfig(seed: UInt64) -> SimulationConfig {
        SimulationConfig(seed: seed, calls: calls, devices: devices, users: users, faults: faults.kinds,
                         maxSteps: steps, hostileSenders: hostile, trace: replay)
    }

    func run() throws {
        let seed = self.seed ?? UInt64.random(in: 0...UInt64.max)
        let world = worldConfig(seed: seed)
        let shards = SimulationShards.configs(world, jobs: jobs)
        print("simulate: \(world.arguments(jobs: jobs, shard: shard)) (\(shards.count) shard\(shards.count == 1 ? "" : "s"))")
        let clock = ContinuousClock()
        let started = clock.now
        let result: ShardedReport
        if let shard {
            // One shard alone, as it ran inside the whole run.
            print("shard \(shard): \(shards[shard].replayArguments)")
            let trace: ((String) -> Void)? = replay ? { print($0) } : nil
            let report = Simulation.run(shards[shard], trace: trace)
            result = ShardedReport(merged: report, shards: [report])
        } else if replay {
            result = ShardedReport(merged: Simulation.run(world, trace: { print($0) }), shards: [])
        } else {
            result = SimulationShards.run(world, jobs: jobs)
        }
        let wall = clock.now - started
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        printReport(result.merged, wallSeconds: seconds)
        print("seed: \(seed)")
        guard let violation = result.merged.violations.first else { return }
        print("FAILED: \(violation)")
        // The failing world alone: a shard replays from the main seed with --shard, or by its own
        // arguments (one world, --jobs 1).
        let failing = shard.map { shards[$0] } ?? violation.shard.map { shards[$0] } ?? world
        if let k = shard ?? violation.shard {
            print("failing shard: \(k) of \(shards.count): ipcemu simulate \(world.arguments(jobs: jobs, shard: k)) --replay")
            print("the same world alone: ipcemu simulate \(failing.replayArguments) --replay")
        }
        if !noShrink, !replay {
            print("shrinking ...")
            var start = failing
            start.trace = false
            if let shrunk = Shrinker.shrink(start, run: { Simulation.run($0) }) {
                print("smallest failing run (\(shrunk.runs) runs): \(shrunk.violation)")
                print("replay: ipcemu simulate \(shrunk.config.replayArguments) --replay")
            }
        }
        throw ExitCode.failure
    }

    private func printReport(_ r: SimulationReport, wallSeconds: Double) {
        let perSecond = wallSeconds > 0 ? Double(r.callsStarted) / wallSeconds : 0
        let split = r.splitCalls > 0 ? " (\(r.splitCalls) of them ended on one side before another side's ring arrived)" : ""
        print("calls: \(r.callsStarted) started, \(r.callsCompleted) ended on every side\(split), \(r.startsRefused) starts refused (caller busy), \(r.messagesLeft) presses left a message")
        print("steps: \(r.steps), simulated \(String(format: "%.1f", Double(r.simulatedMs) / 3_600_000)) h, messages published \(r.published), delivered \(r.delivered)")
        print("wall time: \(String(format: "%.2f", wallSeconds)) s, \(String(format: "%.0f", perSecond)) calls per second of wall time")
        print("faults injected: " + r.faults.lines.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
        print("hostile: \(r.hostileMessages) messages, \(r.decodeRefusals) undecodable, \(r.engineRefusals) refused by engines, refusal replies \(r.refusalRepliesSent) sent / \(r.refusalRepliesDropped) dropped by the limiter, \(r.offersRefused) offers refused")
        print("ghost rings (a side rang again for a call it had ended): \(r.ghostRings)")
        print("checked: \(r.pairsChecked) outcome pairs of clean calls, \(r.faultedCalls) calls touched by a fault\(r.drained ? ", drained" : ", stopped early")")
        print("trace hash: \(String(r.traceHash, radix: 16))")
        print("invariant violations: \(r.violations.count)")
    }
}
