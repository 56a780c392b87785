/// Finds the smallest run that still breaks the same rule: the failing run stops at its first
/// violation (so its step count is already the shortest failing prefix of that run), then the
/// workload is halved (calls, devices, users, hostile senders, faults) for as long as the halved
/// run still fails the same way.
public struct ShrinkResult: Sendable {
    /// The smallest failing configuration; `maxSteps` is the shortest failing prefix.
    public var config: SimulationConfig
    public var violation: Violation
    /// Runs the shrinking took (the first one included).
    public var runs: Int
}

public enum Shrinker {
    /// `run` runs one configuration (stopping at its first violation). Nil when `config` passes.
    public static func shrink(_ config: SimulationConfig, run: (SimulationConfig) -> SimulationReport) -> ShrinkResult? {
        var runs = 1
        guard let first = run(config).violations.first else { return nil }
        var best = config
        best.maxSteps = first.step
        best.trace = false
        var found = first
        var improved = true
        while improved {
            improved = false
            for candidate in halvings(of: best) {
                var attempt = candidate
                attempt.maxSteps = nil
                runs += 1
                guard let v = run(attempt).violations.first, v.rule == found.rule, v.step <= found.step || isSmaller(attempt, than: best) else {
                    continue
                }
                attempt.maxSteps = v.step
                best = attempt
                found = v
                improved = true
                break
            }
        }
        return ShrinkResult(config: best, violation: found, runs: runs)
    }

    private static func isSmaller(_ a: SimulationConfig, than b: SimulationConfig) -> Bool {
        a.calls + a.devices + a.users + a.hostileSenders < b.calls + b.devices + b.users + b.hostileSenders
    }

    /// The next smaller workloads to try, biggest cut first.
    static func halvings(of c: SimulationConfig) -> [SimulationConfig] {
        var out: [SimulationConfig] = []
        func with(_ change: (inout SimulationConfig) -> Void) {
            var copy = c
            change(&copy)
            if copy != c { out.append(copy) }
        }
        // The smallest worlds first (one device, its household, two calls, no flood), then halvings.
        if c.calls > 2 { with { $0.calls = 2 } }
        if c.devices > 1 { with { $0.devices = 1 } }
        if c.users > 2 { with { $0.users = 2 } }
        if c.hostileSenders > 0 { with { $0.hostileSenders = 0 } }
        if c.calls > 1 { with { $0.calls = c.calls / 2 } }
        if c.devices > 1 { with { $0.devices = c.devices / 2 } }
        if c.users > 1 { with { $0.users = c.users / 2 } }
        if c.hostileSenders > 0 { with { $0.hostileSenders = c.hostileSenders / 2 } }
        if !c.faults.isEmpty { with { $0.faults = [] } }
        if c.calls > 1 { with { $0.calls = c.calls - 1 } }
        return out
    }
}

extension SimulationConfig {
    /// The `ipcemu simulate` arguments that replay this run as one world (a shard's or a shrunk
    /// run's arguments replay it alone).
    public var replayArguments: String { arguments(jobs: 1) }

    /// The `ipcemu simulate` arguments of this world split into `jobs` shards (only `shard`, if given).
    public func arguments(jobs: Int, shard: Int? = nil) -> String {
        var text = "--seed \(seed) --calls \(calls) --devices \(devices) --users \(users) --faults \(faults.text) --hostile \(hostileSenders)"
        if let maxSteps { text += " --steps \(maxSteps)" }
        text += " --jobs \(jobs)"
        if let shard { text += " --shard \(shard)" }
        return text
    }
}
