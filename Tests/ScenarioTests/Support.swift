import Foundation
import Scenario
import Testing
import TestSupport

/// Every suite of this folder hangs under this one, one test at a time: each scenario starts its
/// own mosquitto and devices, and the video ones keep an encoder busy.
@Suite("Scenarios", .serialized, .heavy)
struct Scenarios {}

let scenariosFolder = packageRootPath + "/scenarios"

/// The shipped scenario files, sorted.
func shippedScenarioFiles() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: scenariosFolder)) ?? []
    return names.filter { $0.hasSuffix(".yaml") }.sorted()
}

/// Parses a scenario written in a test; its profile path is relative to scenarios/.
func scenario(_ yaml: String, name: String = "inline.yaml") throws -> Scenario {
    try Scenario.parse(yaml: yaml, fileName: scenariosFolder + "/" + name)
}

/// The parse error of `yaml` (fails the test if it parses).
func parseError(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ScenarioError? {
    do {
        _ = try scenario(yaml, name: "bad.yaml")
        Issue.record("expected a parse error", sourceLocation: sourceLocation)
        return nil
    } catch let e as ScenarioError {
        return e
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A runnable program on PATH.
func onPath(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

/// Fails the test with the run's summary when the run did not pass. (`#expect(r.passed, ...)`
/// prints the whole result, expanded, before the message, and CI logs cut it before the reason.)
func expectPassed(_ r: ScenarioResult, _ label: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
    guard !r.passed else { return }
    Issue.record(Comment(rawValue: (label.isEmpty ? "" : label + ": ") + r.summaryText), sourceLocation: sourceLocation)
}

/// Fails the test when a run meant to fail passed.
func expectFailed(_ r: ScenarioResult, sourceLocation: SourceLocation = #_sourceLocation) {
    guard r.passed else { return }
    Issue.record(Comment(rawValue: "the run was meant to fail and passed: " + r.summaryText), sourceLocation: sourceLocation)
}
