import ArgumentParser
import Foundation
import Scenario

/// `ipcemu scenario ...`: scripted QA campaigns (docs/scenarios.md).
struct ScenarioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Run or check scenario files: steps, faults on a timeline, expectations, and a report.",
        subcommands: [Run.self, Check.self]
    )

    /// `ipcemu scenario run FILE... [--broker URL] [--app simulated|external] [--simulated] [--junit OUT.xml] [--report OUT.html]`
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run scenarios against in-process devices; exit 0 if every expectation held.",
            discussion: """
                The devices of each scenario run in this process, on a private mosquitto unless --broker is given. \
                With --app simulated (the default) the app users are our app simulator; with --app external a real \
                phone app on the same broker plays them, and the scenario only drives and observes the devices \
                (steps where an app user acts are refused). Prints PASS/FAIL per scenario with every failure \
                (step, what was expected, what was seen). With --simulated the same files run on simulated time \
                (the deterministic simulator: real engines, codecs, DP store and power machine, no broker; video \
                is frame timing and counters without pixels, snapshots and messages are DPs without files), each \
                in well under a second; --app external is refused. Exit status: 0 all passed, 1 a scenario failed, \
                2 a file does not load.
                """
        )

        @Argument(help: "Scenario files (YAML).")
        var files: [String] = []

        @Option(help: "MQTT broker URL (default: a private mosquitto on a free loopback port).")
        var broker: String?

        @Option(help: "Who plays the app: simulated (our app simulator) or external (a real app under test).")
        var app: ScenarioAppOption = .simulated

        @Flag(help: "Run on simulated time in the deterministic simulator (no broker; video without pixels; waits cost no wall time).")
        var simulated = false

        @Option(help: "Write JUnit XML here (one test case per scenario run and per expectation).")
        var junit: String?

        @Option(help: "Write the self-contained HTML report here (sequence diagrams, timings, plots).")
        var report: String?

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one scenario file") }
            if let broker, !(broker.hasPrefix("mqtt://") || broker.hasPrefix("mqtts://")) {
                throw ValidationError("--broker must be an mqtt:// or mqtts:// URL; got '\(broker)'")
            }
            if simulated, broker != nil { throw ValidationError("--simulated runs without a broker: drop --broker") }
            if simulated, app == .external { throw ValidationError("--simulated plays the app itself: --app external does not apply") }
        }

        func run() async throws {
            var scenarios: [Scenario] = []
            for file in files {
                do {
                    scenarios.append(try Scenario.load(path: file))
                } catch {
                    note(error.description)
                    throw ExitCode(2)
                }
            }
            let mode = app.mode
            var results: [ScenarioResult] = []
            for s in scenarios {
                note("running \(s.name) (\(s.file), app \(mode.rawValue)\(simulated ? ", simulated time" : ""))")
                let r = await ScenarioRunner.run(s, brokerURL: broker, appMode: mode, simulated: simulated)
                say(r.summaryText)
                results.append(r)
            }
            if let junit { try write(JUnitReport.xml(results), to: junit, what: "JUnit XML") }
            if let report { try write(HTMLReport.html(results), to: report, what: "HTML report") }
            if results.count > 1 {
                say("\(results.filter(\.passed).count) of \(results.count) scenarios passed")
            }
            if !results.allSatisfy(\.passed) { throw ExitCode(1) }
        }

        private func write(_ text: String, to path: String, what: String) throws {
            do {
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                note("\(what) written to \(path)")
            } catch {
                note("cannot write the \(what) to \(path): \(error.localizedDescription)")
                throw ExitCode(2)
            }
        }
    }

    /// `ipcemu scenario check FILE...`: validates without running.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate scenario files without running them.",
            discussion: """
                Prints 'FILE: ok (N steps, ...)' for a good scenario and 'FILE:LINE: FIELD: what was expected' \
                (on standard error) for the first mistake in a bad one. Exits with status 1 if any file is bad.
                """
        )

        @Argument(help: "Scenario files (YAML).")
        var files: [String] = []

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one scenario file") }
        }

        func run() throws {
            var bad = 0
            for file in files {
                do {
                    let s = try Scenario.load(path: file)
                    let expects = s.allSteps.filter { if case .expect = $0.kind { true } else { false } }.count
                    say("\(file): ok (\(s.name): \(s.allSteps.count) steps, \(expects) expectations, "
                        + "\(s.devices.count) device(s) of \(s.devices.profile.identity.devId), "
                        + "\(s.needsSimulatedApp ? "needs --app simulated" : "runs with --app simulated or external"))")
                } catch {
                    bad += 1
                    note(error.description)
                }
            }
            if bad > 0 { throw ExitCode(1) }
        }
    }
}
