import Testing
import TestSupport
@testable import Simulation

/// CPU-bound for seconds on threads of their own: `.heavy`, so a parallel `swift test` runs a few
/// such at a time and the cooperative pool keeps a share of the two cores (docs/testing.md).
@Suite(.heavy) struct SimulationRunTests {
    /// A fixed seed, every fault, thousands of calls: every invariant holds after every step and
    /// every call ends on every side.
    @Test func fixedSeedRunWithEveryFaultHasNoViolations() async {
        let report = await offThePool {
            Simulator(config: SimulationConfig(seed: 20_231_126, calls: 2500, devices: 25, users: 75,
                                               faults: .all, hostileSenders: 1)).run()
        }
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.drained)
        #expect(report.callsStarted == 2500)
        // Every call started ended on every side, each counted once (a press that left a message
        // is not a call).
        #expect(report.callsCompleted == report.callsStarted)
        #expect(report.faults.lost > 0 && report.faults.duplicated > 0 && report.faults.disconnects > 0)
        #expect(report.refusalRepliesSent > 0)
    }

    /// Without faults every call is clean, so the outcome pairs of PROTOCOL.md are checked on each.
    @Test func cleanRunChecksEveryOutcomePair() async {
        let report = await offThePool {
            Simulator(config: SimulationConfig(seed: 5, calls: 1500, devices: 15, users: 45,
                                               faults: .none, hostileSenders: 0)).run()
        }
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.drained)
        #expect(report.pairsChecked > 1000)
        #expect(report.faults == FaultCounts(linkFailures: report.faults.linkFailures, linkBreaks: report.faults.linkBreaks,
                                             linkRecoveries: report.faults.linkRecoveries))
    }

    /// Same seed, same run: the trace hash (every step's time, kind and node) is identical; another
    /// seed gives another run.
    @Test func sameSeedSameTrace() async {
        let config = SimulationConfig(seed: 99, calls: 300, devices: 8, users: 20, faults: .all)
        var other = config
        other.seed = 100
        let (a, b, c) = await offThePool { [other] in
            (Simulator(config: config).run(), Simulator(config: config).run(), Simulator(config: other).run())
        }
        #expect(a.traceHash == b.traceHash)
        #expect(a.steps == b.steps)
        #expect(a.faults == b.faults)
        #expect(c.traceHash != a.traceHash)
    }

    /// A replay prints each step; a prefix stops where asked.
    @Test func replayPrintsTheSteps() {
        var lines: [String] = []
        let config = SimulationConfig(seed: 3, calls: 5, devices: 2, users: 4, faults: .none, maxSteps: 40, trace: true)
        let report = Simulator(config: config, trace: { lines.append($0) }).run()
        #expect(report.steps == 40)
        #expect(!report.drained)
        #expect(lines.contains { $0.hasPrefix("step 1 ") })
        #expect(lines.contains { $0.hasPrefix("step 40 ") })
    }

    @Test func faultNamesParse() throws {
        #expect(try FaultKinds.parse("all").get() == .all)
        #expect(try FaultKinds.parse("none").get() == [])
        #expect(try FaultKinds.parse("loss,clockjump").get() == [.loss, .clockJump])
        #expect(FaultKinds([.dup, .partition]).text == "dup,partition")
        guard case .failure(let error) = FaultKinds.parse("loss,meteor") else {
            Issue.record("an unknown fault parsed")
            return
        }
        #expect(error.description.contains("meteor"))
    }
}
