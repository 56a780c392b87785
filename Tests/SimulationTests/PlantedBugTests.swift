import CallEngine
import IPCWire
import Testing
import TestSupport
@testable import Simulation

/// A device engine with one rule broken on purpose: when it answers a call `busy` because it is in
/// another session (PROTOCOL.md 3.1.2, "nothing else changes"), it rings as well.
struct RingsTwiceWhenBusy: SimulatedDeviceEngine {
    var inner: DeviceSideEngine

    mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] {
        let wasInCall = inner.phase != .idle
        var effects = inner.handle(input, now: now)
        if wasInCall, case .received(let message) = input, message.event == .call,
           effects.contains(where: { if case .send(let m) = $0 { m.event == .busy } else { false } }) {
            effects.append(.startRinging(sessionId: message.sessionId))
        }
        return effects
    }

    var answeredCall: AnsweredCall? { inner.answeredCall }
    var armedTimers: [(timer: CallTimer, at: Int64)] { inner.armedTimers }
    var phase: CallPhase { inner.phase }
}

/// A device engine that never reports the end of a call it rejected (one side never ends).
struct ForgetsRejections: SimulatedDeviceEngine {
    var inner: DeviceSideEngine

    mutating func handle(_ input: CallInput, now: Int64) -> [CallEffect] {
        let effects = inner.handle(input, now: now)
        return effects.filter {
            if case .callEnded(let record) = $0 { record.outcome != .rejected } else { true }
        }
    }

    var answeredCall: AnsweredCall? { inner.answeredCall }
    var armedTimers: [(timer: CallTimer, at: Int64)] { inner.armedTimers }
    var phase: CallPhase { inner.phase }
}

/// CPU-bound for seconds on threads of their own: `.heavy`, so a parallel `swift test` runs a few
/// such at a time and the cooperative pool keeps a share of the two cores (docs/testing.md).
@Suite(.heavy) struct PlantedBugTests {
    @Test func ringingTwiceWhenBusyIsFoundAndShrunk() async throws {
        let config = SimulationConfig(seed: 7, calls: 2000, devices: 20, users: 60, faults: .all)
        let run: @Sendable (SimulationConfig) -> SimulationReport = {
            Simulator<RingsTwiceWhenBusy>(config: $0, wrap: { RingsTwiceWhenBusy(inner: $0) }).run()
        }
        let first = await offThePool { run(config) }
        let violation = try #require(first.violations.first)
        #expect(violation.rule == "busy-rings-once")
        let shrunk = try #require(await offThePool { Shrinker.shrink(config, run: run) })
        #expect(shrunk.violation.rule == "busy-rings-once")
        let steps = try #require(shrunk.config.maxSteps)
        #expect(steps < 50, "shrunk to \(shrunk.config.replayArguments): \(shrunk.violation)")
        print("planted bug (rings twice when busy) shrunk in \(shrunk.runs) runs to \(steps) steps: \(shrunk.config.replayArguments): \(shrunk.violation)")
        // The shrunk prefix replays to the same violation, and one step less passes.
        var shorter = shrunk.config
        shorter.maxSteps = steps - 1
        let (replay, shorterRun) = await offThePool { [shrunkConfig = shrunk.config, shorter] in
            (run(shrunkConfig), run(shorter))
        }
        #expect(replay.violations.first == shrunk.violation)
        #expect(shorterRun.violations.isEmpty)
    }

    @Test func aSideThatNeverEndsIsFound() async throws {
        let config = SimulationConfig(seed: 11, calls: 200, devices: 5, users: 15, faults: .none)
        let run: @Sendable (SimulationConfig) -> SimulationReport = {
            Simulator<ForgetsRejections>(config: $0, wrap: { ForgetsRejections(inner: $0) }).run()
        }
        let violation = try #require(await offThePool { run(config) }.violations.first)
        #expect(violation.rule == "busy-rings-once" || violation.rule == "ends-once")
        let shrunk = try #require(await offThePool { Shrinker.shrink(config, run: run) })
        #expect((shrunk.config.maxSteps ?? .max) < 50, "\(shrunk.config.replayArguments): \(shrunk.violation)")
    }
}
