import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    @Suite("The shipped library") struct Shipped {
        @Test("the library covers the flows and faults it promises")
        func libraryIsThere() {
            let files = shippedScenarioFiles()
            for name in ["press-app-answers", "app-calls-device-answers", "app-calls-device-rejects", "app-calls-device-busy",
                         "app-calls-device-ignores", "one-to-more-already-answered", "one-to-more-already-rejected", "cancel",
                         "hangup-both-ways", "heartbeat-timeout", "mqtt-drop-mid-call", "p2p-drop-disconnected",
                         "video-frame-rate", "unauthorised-offer", "fleet-presses"] {
                #expect(files.contains(name + ".yaml"), "scenarios/\(name).yaml is missing")
            }
        }

        @Test("every shipped scenario passes with the simulated app", arguments: shippedScenarioFiles())
        func passes(file: String) async throws {
            let s = try Scenario.load(path: scenariosFolder + "/" + file)
            let result = await ScenarioRunner.run(s, appMode: .simulated)
            #expect(result.passed, "\(result.summaryText)")
            #expect(!result.expectations.isEmpty)
            #expect(!result.calls.isEmpty, "the run recorded its calls")
        }
    }
}
