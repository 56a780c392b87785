import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    @Suite("Loading and checking") struct Loading {
        @Test("every shipped scenario loads")
        func shippedLoad() throws {
            for file in shippedScenarioFiles() {
                let s = try Scenario.load(path: scenariosFolder + "/" + file)
                #expect(!s.steps.isEmpty, "\(file)")
            }
        }

        @Test("the vocabulary reads into steps: modifiers, blocks, conditions, distributions")
        func vocabulary() throws {
            let s = try scenario("""
                name: vocab
                seed: 3
                devices:
                  profile: profiles/fleet-qa.yaml
                  count: 2
                  household: ["u-{index}"]
                apps:
                  - {user: "u-{index}", answer: answer, answerDelay: 0.5}
                steps:
                  - on: all
                    repeat: 2
                    steps:
                      - press: {targets: ["u-{index}"], callType: 1, timeout: 4}
                        after: {uniform: [0.1, 0.2]}
                      - expect: {answered: 2}
                      - sleep: {exponential: 0.5}
                  - fault: {dropMqtt: 2}
                    on: 1
                  - fault: {delayReplies: 300}
                  - wait: {received: ring, from: u-0, timeout: 4}
                  - expect: {frames: 30, fps: 15, user: u-0, within: 5}
                  - expect: {noEvent: busy, direction: sent}
                """)
            #expect(s.devices.count == 2)
            #expect(s.seed == 3)
            #expect(s.apps.first?.answer == .answerAfter(ms: 500))
            #expect(s.steps.count == 6)
            guard case .repeatBlock(2, let inner) = s.steps[0].kind else { Issue.record("not a block"); return }
            #expect(s.steps[0].on == .all)
            #expect(inner.map(\.label) == ["1.1", "1.2", "1.3"])
            #expect(inner[0].kind == .press(targets: ["u-{index}"], callType: .oneToOne, timeout: 4))
            #expect(inner[0].after == .uniform(0.1, 0.2))
            #expect(inner[2].kind == .sleep(.exponential(mean: 0.5)))
            #expect(s.steps[1].on == .first(1))
            #expect(s.steps[1].kind == .fault(.dropMQTT(seconds: 2)))
            #expect(s.steps[2].kind == .fault(.delayReplies(ms: 300)))
            #expect(s.steps[3].kind == .wait(.message(.ring, .received, peer: "u-0", reason: nil), timeout: 4))
            #expect(s.steps[4].kind == .expect(.frames(count: 30, fps: 15, user: "u-0"), within: 5))
            #expect(s.steps[5].kind == .expect(.noEvent(.busy, .sent), within: nil))
        }

        @Test("mistakes are reported as FILE:LINE: FIELD: what was expected", arguments: [
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - pres: household\n",
             "bad.yaml:4: steps[0].pres: unknown key 'pres'; did you mean 'press'?"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - expect: {sent: rign}\n",
             "bad.yaml:4: steps[0].expect.sent: expected one of call,"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - expect: {answered: soon}\n",
             "bad.yaml:4: steps[0].expect.answered: expected a number of seconds"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - wait: {state: answered, within: 2}\n",
             "bad.yaml:4: steps[0].wait.within: a wait takes 'timeout', not 'within'"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - answer: user-zed\n",
             "bad.yaml:4: steps: step 1 names app user 'user-zed', who is not under 'apps'"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml, count: 3}\nsteps: [{sleep: 1}]\n",
             "bad.yaml:2: devices.profile: count 3 needs a fleet template profile"),
            ("name: x\ndevices: {profile: nowhere.yaml}\nsteps: [{sleep: 1}]\n",
             "bad.yaml:2: devices.profile: the profile does not load:"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - press: household\n    hangup: device\n",
             "bad.yaml:4: steps[0]: expected one step kind per step, got press and hangup"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - sleep: {uniform: [3, 1]}\n",
             "bad.yaml:4: steps[0].sleep.uniform: expected min <= max"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - expect: {sdkError: -2999, user: a}\n",
             "bad.yaml:4: steps[0].expect.sdkError: expected an integer from -2599 to -2500, got -2999"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps:\n  - fault: {dropMqtt: 2, delayReplies: 5}\n",
             "bad.yaml:4: steps[0].fault: expected one fault"),
            ("devices: {profile: profiles/doorbell-qa.yaml}\nsteps: [{sleep: 1}]\n",
             "bad.yaml:1: name: missing required field 'name'"),
            ("name: x\ndevices: {profile: profiles/doorbell-qa.yaml}\nsteps: [{sleep: 1}\n",
             "bad.yaml: not valid YAML"),
        ])
        func mistakes(yaml: String, expected: String) {
            guard let e = parseError(yaml) else { return }
            let text = e.description.replacingOccurrences(of: scenariosFolder + "/", with: "")
            #expect(text.hasPrefix(expected), "\(text)")
        }

        @Test("with --app external a step where an app user acts is refused before anything starts")
        func externalRefusesAppSteps() async throws {
            let s = try scenario("""
                name: ext
                devices: {profile: profiles/doorbell-qa.yaml}
                apps: [{user: user-alice}]
                steps:
                  - press: household
                  - answer: user-alice
                """)
            let r = await ScenarioRunner.run(s, appMode: .external)
            expectFailed(r)
            #expect(r.setupError?.contains("step 2 (line 6, user-alice answers) needs the simulated app") == true, "\(r.setupError ?? "")")
        }

        @Test("ipcemu scenario check: ok lines for good files, FILE:LINE for a bad one, exit 1")
        func checkCommand() async throws {
            let bad = NSTemporaryDirectory() + "ipcemu-bad-scenario-\(UInt32.random(in: 0...UInt32.max)).yaml"
            try "name: x\ndevices: {profile: \(scenariosFolder)/profiles/doorbell-qa.yaml}\nsteps:\n  - expect: {state: ringing}\n"
                .write(toFile: bad, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: bad) }
            let good = scenariosFolder + "/cancel.yaml"
            let run = try await CLIRun.ipcemu(["scenario", "check", good, bad])
            #expect(run.status == 1)
            #expect(run.stdout.contains("\(good): ok (cancel: "), "\(run.stdout)")
            #expect(run.stderr.contains("\(bad):4: steps[0].expect.state: expected one of idle, ringingIncoming, ringingOutgoing, answered, got 'ringing'"),
                    "\(run.stderr)")
        }
    }
}
