import Testing
@testable import Simulation

@Suite struct SimulationRunTests {
    @Test func smallRunHasNoViolations() {
        let report = Simulator(config: SimulationConfig(seed: 1, calls: 200, devices: 10, users: 30)).run()
        print("steps \(report.steps) published \(report.published) delivered \(report.delivered) calls \(report.callsStarted) completed \(report.callsCompleted) pairs \(report.pairsChecked) faulted \(report.faultedCalls) hostile \(report.hostileMessages) sim \(report.simulatedMs) \(report.faults) \(report.outcomes)")
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.drained)
    }
}
