import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    /// The doorbell vocabulary of PROTOCOL.md 8 (docs/scenarios.md, "Doorbells"): parsed, refused
    /// when wrong; the four doorbell scenarios of the library run in `SimulatedTime.sameVerdict`.
    @Suite("Doorbell scenarios") struct Doorbell {
        static let files = ["doorbell-press-accept-video.yaml", "doorbell-answered-by-other.yaml",
                            "doorbell-ring-timeout-leave-message.yaml", "battery-doorbell-wake-by-topic.yaml"]

        @Test("the doorbell steps and conditions parse into their kinds")
        func vocabulary() throws {
            let s = try scenario("""
                name: doorbell-vocabulary
                devices:
                  profile: profiles/battery-doorbell-qa.yaml
                  sleepAfter: 4
                  wakeLatency: 0.2
                  ringTimeout: 6
                apps:
                  - user: user-alice
                steps:
                  - press: household
                  - expect: 43
                  - expect: {sent: 43}
                  - accept: user-alice
                  - expect: {sent: answered, to: user-alice, within: 2}
                  - expect: {received: accept, from: user-alice}
                  - expect: {noEvent: timeout}
                  - wake: user-alice
                  - wake: {user: user-alice, by: dp}
                  - wake: device
                  - expect: {dp: 149, equals: true, within: 2}
                  - expect: {dp: 212, alert: ipc_leave_msg}
                  - wait: {power: asleep, timeout: 5}
                  - leaveMessage: {within: 12}
                  - motion:
                  - battery: 10
                  - dps: {134: false, 147: 30}
                """)
            #expect(s.devices.profile.power.sleepAfter == 4)
            #expect(s.devices.profile.power.wakeLatency == 0.2)
            #expect(s.devices.profile.doorbell.ringTimeout == 6)
            let kinds = s.steps.map(\.kind)
            #expect(kinds[1] == .expect(.doorbell(.pressSent), within: nil))
            #expect(kinds[2] == .expect(.doorbell(.pressSent), within: nil))
            #expect(kinds[3] == .doorbell(.accept(user: "user-alice")))
            #expect(kinds[4] == .expect(.doorbell(.message(.answered, .sent, peer: "user-alice", reason: nil)), within: 2))
            #expect(kinds[5] == .expect(.doorbell(.message(.accept, .received, peer: "user-alice", reason: nil)), within: nil))
            #expect(kinds[6] == .expect(.doorbell(.noMessage(.timeout, nil)), within: nil))
            #expect(kinds[7] == .doorbell(.wake(.topic(user: "user-alice"))))
            #expect(kinds[8] == .doorbell(.wake(.dataPoint(user: "user-alice"))))
            #expect(kinds[9] == .doorbell(.wake(.device)))
            #expect(kinds[10] == .expect(.doorbell(.dataPoint(149, equals: .bool(true), alert: nil)), within: 2))
            #expect(kinds[11] == .expect(.doorbell(.dataPoint(212, equals: nil, alert: "ipc_leave_msg")), within: nil))
            #expect(kinds[12] == .wait(.doorbell(.power("asleep")), timeout: 5))
            #expect(kinds[13] == .doorbell(.leaveMessage(within: 12)))
            #expect(kinds[14] == .doorbell(.motion))
            #expect(kinds[15] == .doorbell(.battery(percent: 10)))
            #expect(kinds[16] == .doorbell(.setDataPoints([134: .bool(false), 147: .int(30)])))
            #expect(s.needsSimulatedApp)
        }

        @Test("mistakes name the line and field: an unknown DP, an unknown alert, a 43 received, a user not under apps")
        func refusals() {
            let head = """
                name: bad
                devices:
                  profile: profiles/ac-doorbell-qa.yaml
                apps:
                  - user: user-alice
                steps:

                """
            let dp = parseError(head + "  - expect: {dp: 999}\n")
            #expect(dp?.line == 7 && dp?.field == "steps[0].expect.dp")
            let alert = parseError(head + "  - expect: {dp: 212, alert: ipc_bell}\n")
            #expect(alert?.field == "steps[0].expect.alert")
            let received = parseError(head + "  - expect: {received: 43}\n")
            #expect(received?.message.contains("sent: 43") == true)
            let event = parseError(head + "  - expect: {sent: ring}\n")
            #expect(event?.field == "steps[0].expect.sent")
            let user = parseError(head + "  - accept: user-carol\n")
            #expect(user?.message.contains("user-carol") == true)
            let battery = parseError(head + "  - battery: 120\n")
            #expect(battery?.field == "steps[0].battery")
        }

        @Test("a doorbell expectation that cannot hold fails, naming what the device had")
        func failing() async throws {
            let s = try scenario("""
                name: doorbell-failing
                devices:
                  profile: profiles/ac-doorbell-qa.yaml
                steps:
                  - motion:
                  - expect: {dp: 212, alert: ipc_motion, within: 2}
                  - expect: {dp: 149, equals: false, within: 0.3}
                  - expect: {sent: 43, within: 0.3}
                """)
            let result = await ScenarioRunner.run(s, brokerURL: nil, appMode: .external)
            expectFailed(result)
            let failures = result.expectations.filter { !$0.passed }
            #expect(failures.count == 2, "\(result.summaryText)")
            #expect(failures.first?.failure?.contains("DP 149 was true") == true, "\(failures.first?.failure ?? "")")
        }

        /// That they pass in real time (with at least `minimumExpectations` expectations each) is
        /// checked by `SimulatedTime.sameVerdict`, which runs every shipped scenario in real time
        /// and on simulated time (running them here too cost CI 14 s for the same check).
        @Test("the four doorbell scenarios are in the library, so SimulatedTime.sameVerdict runs them")
        func shipped() {
            let shipped = shippedScenarioFiles()
            for file in Self.files { #expect(shipped.contains(file), "scenarios/\(file) is missing") }
        }

        static let minimumExpectations = 5
    }
}
