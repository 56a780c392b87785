import CallEngine
import Foundation

/// A measured value against its limit (an expectation's timing, a frame rate).
public struct Measure: Sendable, Equatable {
    public var value: Double
    public var limit: Double
    public var unit: String
    /// True when the value must stay at or below the limit (latencies), false at or above (counts, fps).
    public var atMost: Bool
}

/// What one step did on one device (one iteration of its repeat blocks).
public struct StepResult: Sendable {
    public enum Kind: String, Sendable { case action, wait, expect }
    public var step: Step
    public var kind: Kind
    public var device: String
    /// The iteration of each enclosing repeat block, outermost first (1-based).
    public var iteration: [Int]
    public var passed: Bool
    /// Why it failed: which step, what was expected, what was seen.
    public var failure: String?
    public var measure: Measure?
    public var startedAt: Date
    public var seconds: Double

    /// `step 4 (line 23, expect answered within 3 s) on ipcemu-doorbell-0001 [iteration 2]`.
    public var title: String {
        var s = "\(step.title) on \(device)"
        if !iteration.isEmpty { s += " [iteration \(iteration.map(String.init).joined(separator: "."))]" }
        return s
    }
}

/// One call as the report shows it: its events in order and its timings.
public struct CallSummary: Sendable {
    public var device: String
    public var session: String
    public var start: Date
    public var observations: [Observation]
    /// Call -> first `ring`, seconds.
    public var ringLatency: Double?
    /// Call -> `answer`, seconds.
    public var answerLatency: Double?
    /// `answer` -> first video frame the app decoded (or the device sent), milliseconds.
    public var firstFrameMs: Double?
    public var ended: CallRecord?
    /// The app users and devices that took part, in first-seen order (the diagram's lanes).
    public var parties: [String]
}

/// Everything a run produced.
public struct ScenarioResult: Sendable {
    public var scenario: Scenario
    public var appMode: AppMode
    public var brokerURL: String
    public var startedAt: Date
    public var endedAt: Date
    /// Set when the run could not start (broker, devices) or a step needs what the mode lacks.
    public var setupError: String?
    public var steps: [StepResult]
    public var observations: [Observation]
    public var calls: [CallSummary]
    /// Wall time of a run on simulated time (`--simulated`), seconds; nil on real time.
    public var wallSeconds: Double?

    public init(scenario: Scenario, appMode: AppMode, brokerURL: String, startedAt: Date, endedAt: Date, setupError: String?,
                steps: [StepResult], observations: [Observation], calls: [CallSummary]) {
        self.scenario = scenario
        self.appMode = appMode
        self.brokerURL = brokerURL
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.setupError = setupError
        self.steps = steps
        self.observations = observations
        self.calls = calls
    }

    public var failures: [StepResult] { steps.filter { !$0.passed } }
    public var passed: Bool { setupError == nil && failures.isEmpty }
    public var expectations: [StepResult] { steps.filter { $0.kind == .expect } }
    public var seconds: Double { endedAt.timeIntervalSince(startedAt) }

    /// The run's verdict in a few lines (what `ipcemu scenario run` prints).
    public var summaryText: String {
        var lines: [String] = []
        let verdict = passed ? "PASS" : "FAIL"
        lines.append("\(verdict) \(scenario.name) (\(scenario.file)): \(steps.count) steps run, \(expectations.count) expectations, "
            + "\(failures.count) failed, \(calls.count) calls, \(String(format: "%.1f", seconds)) s"
            + (wallSeconds.map { String(format: " simulated in %.2f s of wall time", $0) } ?? ""))
        if let setupError { lines.append("  setup: \(setupError)") }
        for f in failures { lines.append("  " + (f.failure ?? f.title)) }
        return lines.joined(separator: "\n")
    }
}
