import AppSimulator
import CallEngine
import CallRuntime
import Foundation
import MQTTTransport
import Scenario
import Testing
import TestSupport

extension Scenarios {
    @Suite("--app external") struct External {
        /// The "real app" here is an app simulator the scenario knows nothing about, on the broker
        /// the scenario is given: the scenario drives and observes the device side only.
        @Test("a device-side scenario runs against an app it does not control, on the broker given")
        func externalApp() async throws {
            try await withBroker { broker in
                let phone = try AppUser(userId: "user-alice", connection: broker.clientOptions(clientID: "phone"),
                                        config: AppEngineConfig(userId: "user-alice", incomingPolicy: .answerAfter(ms: 200)),
                                        log: EventLog(minimumLevel: .error))
                try await phone.start()
                try await phone.listenToAllDevices()
                let s = try scenario("""
                    name: external-press
                    devices: {profile: profiles/doorbell-qa.yaml, household: [user-alice]}
                    steps:
                      - press: household
                      - expect: {received: ring, from: user-alice, within: 2}
                      - expect: {answered: 3}
                      - hangup: device
                      - expect: {ended: any, outcome: hungUp}
                      - expect: {noEvent: reject}
                    """)
                let r = await ScenarioRunner.run(s, brokerURL: broker.url, appMode: .external)
                await phone.stop()
                expectPassed(r)
                #expect(r.brokerURL == broker.url)
                #expect(r.calls.first?.parties == ["qa-doorbell-0001", "user-alice"])
                let answered = r.expectations.first { if case .expect(.answered, _) = $0.step.kind { true } else { false } }
                #expect((answered?.measure?.value ?? 0) >= 0.2, "the phone's own answer delay is measured")
            }
        }
    }
}
