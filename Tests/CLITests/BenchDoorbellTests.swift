import Foundation
import Testing
import TestSupport

/// `ipcemu bench doorbell` at a small size (issue 20 "Done when"): every phase runs and every line
/// of its table and JSON has numbers.
@Suite("ipcemu bench doorbell", .serialized, .timeLimit(.minutes(8)), .heavy)
struct BenchDoorbellTests {
    @Test("20 presses, 20 wakes, 2 accept -> first frame, a fleet of 50 at 20 wakes/s: every figure is a number; the fleet's wakes all came back")
    func smallBench() async throws {
        let run = try await CLIRun.ipcemu([
            "bench", "doorbell", "--presses", "20", "--wakes", "20", "--first-frames", "2", "--warmup", "1",
            "--sleep-after", "0.2", "--fleet", "50", "--wakes-per-second", "20", "--seconds", "2",
            "--fleet-sleep-after", "1", "--json",
        ])
        #expect(run.status == 0, "stdout: \(run.stdout)\nstderr: \(run.stderr.suffix(3000))")
        let line = try #require(run.stdout.split(separator: "\n").last.map(String.init), "no output")
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let result = try #require(parsed, "not a JSON object: \(line)")

        func stats(_ object: [String: Any]?, _ name: String, n: Int) throws -> [String: Double] {
            let s = try #require(object?[name] as? [String: Any], "\(name) missing: \(line)")
            #expect(s["n"] as? Int == n, "\(name): \(s)")
            var out: [String: Double] = [:]
            for key in ["p50", "p99", "max"] {
                let v = try #require(s[key] as? Double, "\(name).\(key) is not a number: \(s)")
                #expect(v.isFinite && v > 0, "\(name).\(key) = \(v)")
                out[key] = v
            }
            #expect(out["p50"]! <= out["p99"]! && out["p99"]! <= out["max"]!)
            return out
        }
        let press = try stats(result, "pressTo43Ms", n: 20)
        let pressP99 = press["p99"] ?? .nan
        #expect(pressP99 < 1000, "press -> 43 p99 \(pressP99) ms")
        let wakeLatency = try #require(result["wakeLatencyMs"] as? Double)
        let wake = try stats(result, "wakeToAwakeMs", n: 20)
        #expect(wake["p50"]! >= wakeLatency - 1, "a wake came back before wakeLatency: \(wake)")
        _ = try stats(result, "acceptToFirstFrameMs", n: 2)
        let fleet = try #require(result["fleet"] as? [String: Any], "no fleet: \(line)")
        #expect(fleet["online"] as? Int == 50 && fleet["asleepSeen"] as? Int == 50, "\(fleet)")
        #expect(fleet["sent"] as? Int == 40 && fleet["lost"] as? Int == 0, "\(fleet)")
        let fleetWake = try stats(fleet, "wakeToAwakeMs", n: 40)
        #expect(fleetWake["p50"]! >= wakeLatency - 1)
        #expect(fleet["exitStatus"] as? Int == 0)
    }

    @Test("The table: one line per phase, each with n, p50, p99 and max")
    func table() async throws {
        let run = try await CLIRun.ipcemu([
            "bench", "doorbell", "--presses", "5", "--wakes", "2", "--first-frames", "1", "--warmup", "0",
            "--sleep-after", "0.2", "--fleet", "20", "--wakes-per-second", "10", "--seconds", "1", "--fleet-sleep-after", "1",
        ])
        #expect(run.status == 0, "stdout: \(run.stdout)\nstderr: \(run.stderr.suffix(3000))")
        for phase in ["(a) press -> app sees 43", "(b) wake -> DP 149 true", "(c) accept -> first frame", "(d) fleet wake -> DP 149 true"] {
            let row = try #require(run.stdout.split(separator: "\n").first(where: { $0.contains(phase) }), "no \(phase) line: \(run.stdout)")
            let numbers = row.dropFirst(34).split(separator: " ").prefix(4).compactMap { Double($0) }
            #expect(numbers.count == 4 && numbers.allSatisfy { $0.isFinite }, "\(row)")
        }
        #expect(run.stdout.contains("fleet exited"))
    }

    @Test("Bad arguments are refused naming the option")
    func badArguments() async throws {
        for (args, text) in [(["--presses", "-1"], "--presses"), (["--wakes-per-second", "0"], "--wakes-per-second"),
                             (["--sleep-after", "0"], "--sleep-after"), (["--fleet", "-5"], "--fleet")] {
            let run = try await CLIRun.ipcemu(["bench", "doorbell"] + args)
            #expect(run.status != 0 && run.stderr.contains(text), "\(args): \(run.stderr)")
        }
    }
}
