import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    /// `ipcemu scenario run --simulated` (docs/scenarios.md, "Simulated time").
    @Suite("Simulated time") struct SimulatedTime {
        /// Wall seconds a simulated run may take here: "well under a second" on an idle machine;
        /// loose, so a loaded 2-core machine running a debug build does not make it flaky.
        static let wallLimit = 5.0

        /// Each shipped scenario in real time (it must pass: the library's own check) and on
        /// simulated time (the same verdict, steps, expectations and calls). One at a time: 19
        /// real-time runs with devices, brokers and video at once starve a 2-core machine.
        @Test("every shipped scenario passes in real time and has the same verdict on simulated time, in little wall time",
              .serialized, arguments: shippedScenarioFiles())
        func sameVerdict(file: String) async throws {
            let s = try Scenario.load(path: scenariosFolder + "/" + file)
            let t0 = Date()
            let simulated = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let wall = Date().timeIntervalSince(t0)
            #expect(simulated.setupError == nil, "every shipped scenario runs simulated: \(simulated.summaryText)")
            print("simulated \(file): \(String(format: "%.3f", wall)) s wall, \(String(format: "%.1f", simulated.seconds)) s simulated")
            #expect(wall < Self.wallLimit, "\(file) took \(wall) s of wall time on simulated time")
            #expect(simulated.wallSeconds != nil)
            #expect(simulated.summaryText.contains("simulated in"))
            let real = await ScenarioRunner.run(s, appMode: .simulated)
            expectPassed(real)
            #expect(!real.expectations.isEmpty)
            if Doorbell.files.contains(file) {
                #expect(real.expectations.count >= Doorbell.minimumExpectations, "\(file): \(real.summaryText)")
            }
            #expect(!real.calls.isEmpty, "the run recorded its calls")
            let sameVerdict = simulated.passed == real.passed
            #expect(sameVerdict, "simulated: \(simulated.summaryText)\nreal: \(real.summaryText)")
            expectPassed(simulated)
            #expect(simulated.steps.count == real.steps.count, "the same steps ran")
            #expect(simulated.expectations.count == real.expectations.count)
            #expect(simulated.calls.count == real.calls.count, "the same calls")
            #expect(simulated.expectations.map(\.passed) == real.expectations.map(\.passed), "the same expectations pass")
        }

        @Test("a scenario that fails in real time fails the same way on simulated time")
        func failsTheSameWay() async throws {
            let s = try scenario(Failures.failing, name: "failing.yaml")
            let simulated = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let real = await ScenarioRunner.run(s, appMode: .simulated)
            expectFailed(simulated)
            expectFailed(real)
            let simFailures = simulated.failures.map { $0.step.label }
            #expect(simFailures == real.failures.map { $0.step.label }, "the same steps fail")
            let texts = simulated.failures.compactMap(\.failure)
            #expect(texts.count == 2, "\(texts)")
            #expect(texts.first?.contains("expected answered within 0.2 s") == true, "\(texts)")
            #expect(texts.first?.contains("no answer after 0.40 s") == true, "judged at its deadline on the simulator's clock: \(texts)")
            #expect(texts.last?.contains("expected call ended with reason busy") == true, "\(texts)")
            #expect(texts.last?.contains("ended hungUp without a reason") == true, "\(texts)")
            #expect(simulated.expectations.last?.passed == true, "the run went on after the failures")
        }

        /// PROTOCOL.md 4 without frames: offers refused (another user, a wrong auth), the answerer's
        /// link up, then dropped (3.3's 5 s rule): what the shipped video scenarios check besides frames.
        static let links = """
            name: links-without-frames
            devices:
              profile: profiles/doorbell-qa.yaml
              answerPolicy: answer
              answerDelay: 0
              liveView: false
            apps:
              - user: user-alice
                heartbeatInterval: 0.5
              - user: user-eve
            steps:
              - call: {from: user-alice, timeout: 10}
              - expect: {answered: 2}
              - video: {user: user-eve, stream: sub}
              - expect: {offerRefused: user-eve, within: 3}
              - video: {user: user-alice, stream: sub, auth: "d3JvbmctYXV0aA=="}
              - expect: {offerRefused: user-alice, within: 3}
              - video: {user: user-alice, stream: sub}
              - sleep: 3
              - expect: {state: answered}
              - fault: dropP2P
              - expect: {sent: stop, to: user-alice, reason: disconnected, within: 8}
              - expect: {ended: disconnected, outcome: stopped}
              - expect: {sdkError: -2532, user: user-alice, within: 2}
            """

        @Test("P2P links without frames (refused offers, a link dropped) have the same verdict on simulated time")
        func linksWithoutFrames() async throws {
            let s = try scenario(Self.links, name: "links.yaml")
            let simulated = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            expectPassed(simulated)
            let real = await ScenarioRunner.run(s, appMode: .simulated)
            expectPassed(real)
            #expect(simulated.steps.count == real.steps.count)
        }

        @Test("simulated time is deterministic: the same file twice gives the same timeline, event for event and to the millisecond")
        func deterministic() async throws {
            let s = try Scenario.load(path: scenariosFolder + "/doorbell-answered-by-other.yaml")
            let a = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let b = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            func lines(_ r: ScenarioResult) -> [String] {
                r.observations.map { "\(Int64(($0.time.timeIntervalSince(r.startedAt) * 1000).rounded())) \($0.device) \($0.session ?? "-") \($0.kind)" }
            }
            expectPassed(a)
            expectPassed(b)
            #expect(lines(a).count > 20, "\(lines(a))")
            #expect(lines(a) == lines(b))
        }

        @Test("a wait for a state that never comes fails at its deadline, naming the condition, and costs no wall time")
        func waitFailsAtDeadline() async throws {
            let s = try scenario("""
                name: never-answered
                devices: {profile: profiles/doorbell-qa.yaml}
                apps: [{user: user-alice}]
                steps:
                  - sleep: 20
                  - wait: {state: answered, timeout: 30}
                  - press: household
                """)
            let t0 = Date()
            let result = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let wall = Date().timeIntervalSince(t0)
            expectFailed(result)
            #expect(result.steps.count == 2, "the failed wait stopped the device's steps")
            let failure = try #require(result.failures.first?.failure)
            #expect(failure.contains("expected call state answered within 30 s; the call state was idle"), "\(failure)")
            #expect(result.seconds >= 50, "50 s passed on the simulator's clock: \(result.seconds)")
            #expect(wall < Self.wallLimit, "\(wall) s of wall time")
        }

        @Test("an app action whose state never comes fails, naming it, instead of acting anyway")
        func actionWaitsForState() async throws {
            let s = try scenario("""
                name: nothing-rings
                devices: {profile: profiles/doorbell-qa.yaml}
                apps: [{user: user-alice}]
                steps:
                  - answer: user-alice
                """)
            let result = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let failure = try #require(result.failures.first?.failure)
            #expect(failure.contains("user-alice's phone did not reach ringingIncoming within 3 s (it was idle)"), "\(failure)")
        }

        @Test("--app external is refused on simulated time")
        func externalRefused() async throws {
            let s = try Scenario.load(path: scenariosFolder + "/cancel.yaml")
            let result = await ScenarioRunner.run(s, appMode: .external, simulated: true)
            #expect(result.setupError?.hasPrefix("not supported under --simulated: --app external") == true, "\(result.summaryText)")
        }
    }
}
