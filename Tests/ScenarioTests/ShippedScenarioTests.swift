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
        // That every shipped scenario passes in real time with the simulated app is checked by
        // `SimulatedTime.sameVerdict`, which runs each one in real time and on simulated time.
    }
}
