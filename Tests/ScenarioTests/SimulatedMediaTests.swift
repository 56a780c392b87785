import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    /// What `--simulated` puts in place of real media, data points and power (docs/scenarios.md,
    /// "Simulated time"): a model of the video stream, the device's DP store and power machine, and
    /// camera media as names and DPs.
    @Suite("Simulated media, data points and power") struct SimulatedMedia {
        /// The app's frame samples (every 500 ms) on the run's timeline: (ms since start, frames, user).
        static func appFrames(_ r: ScenarioResult) -> [(ms: Int64, frames: Int)] {
            r.observations.compactMap { o in
                guard case .video(_, let user?, let frames, _) = o.kind, !user.isEmpty else { return nil }
                return (Int64((o.time.timeIntervalSince(r.startedAt) * 1000).rounded()), frames)
            }
        }

        @Test("frames come at the stream's rate from link-up, and stop when the link closes")
        func framesAtRateAndStop() async throws {
            let s = try scenario("""
                name: simulated-frames
                devices: {profile: profiles/doorbell-qa.yaml, answerPolicy: answer, answerDelay: 0}
                apps: [{user: user-alice, heartbeatInterval: 0.5}]
                steps:
                  - call: {from: user-alice, timeout: 10}
                  - expect: {answered: 2}
                  - video: {user: user-alice, stream: sub}
                  - expect: {videoStarted: 1000}
                  - expect: {frames: 31, fps: 15, within: 5}
                  - hangup: user-alice
                  - expect: {ended: any, outcome: hungUp, within: 3}
                  - sleep: 2
                """, name: "frames.yaml")
            let r = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            expectPassed(r)
            // The sub stream of doorbell-qa.yaml is 15 fps: 31 frames take exactly 2 s from the first.
            let rate = try #require(r.expectations.first { $0.measure?.unit == "fps" }?.measure)
            #expect(abs(rate.value - 15) < 0.6, "measured \(rate.value) fps")
            let started = try #require(r.expectations.first { $0.measure?.unit == "ms" }?.measure)
            #expect(started.value >= 150 && started.value < 400, "the link connects 150 ms after the offer is taken: \(started.value) ms")
            // After the hang-up the app's count no longer grows (the link closed, no frame is sent).
            let samples = Self.appFrames(r)
            let ended = try #require(r.expectations.last).startedAt.timeIntervalSince(r.startedAt) * 1000
            let after = samples.filter { Double($0.ms) > ended + 600 }.map(\.frames)
            #expect(after.count >= 2, "\(samples)")
            #expect(Set(after).count == 1, "frames stopped with the link: \(samples)")
            #expect((after.first ?? 0) >= 31)
        }

        @Test("the device's own DPs: set, reported, and a value of the wrong type refused naming the DP")
        func dataPoints() async throws {
            let s = try scenario("""
                name: simulated-dps
                devices: {profile: profiles/ac-doorbell-qa.yaml}
                apps: [{user: user-alice}]
                steps:
                  - dps: {147: 30, 150: false}
                  - expect: {dp: 147, equals: 30, within: 1}
                  - expect: {dp: 150, equals: false}
                  - motion:
                  - expect: {dp: 212, alert: ipc_motion, within: 2}
                  - expect: {dp: 115, within: 1}
                """, name: "dps.yaml")
            let r = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            expectPassed(r)
            let bad = try scenario("""
                name: simulated-dps-refused
                devices: {profile: profiles/ac-doorbell-qa.yaml}
                apps: [{user: user-alice}]
                steps:
                  - dps: {147: "thirty"}
                """, name: "dps-bad.yaml")
            let refused = await ScenarioRunner.run(bad, appMode: .simulated, simulated: true)
            let failure = try #require(refused.failures.first?.failure)
            #expect(failure.contains("147"), "\(failure)")
        }

        @Test("sleep and wake on simulated time are deterministic: the battery doorbell scenario twice gives the same timeline")
        func powerDeterministic() async throws {
            let s = try Scenario.load(path: scenariosFolder + "/battery-doorbell-wake-by-topic.yaml")
            let a = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            let b = await ScenarioRunner.run(s, appMode: .simulated, simulated: true)
            func lines(_ r: ScenarioResult) -> [String] {
                r.observations.map { "\(Int64(($0.time.timeIntervalSince(r.startedAt) * 1000).rounded())) \($0.device) \($0.session ?? "-") \($0.kind)" }
            }
            expectPassed(a)
            #expect(lines(a).count > 30, "\(lines(a))")
            #expect(lines(a) == lines(b))
        }
    }
}
