import Foundation

/// JUnit XML (the Ant/Jenkins/GitLab shape): one `<testsuite>` per scenario run, one `<testcase>`
/// for the run as a whole and one per expectation checked (per device and iteration).
public enum JUnitReport {
    public static func xml(_ results: [ScenarioResult]) -> String {
        let tests = results.reduce(0) { $0 + 1 + $1.expectations.count }
        let failures = results.reduce(0) { $0 + ($1.passed ? 0 : 1) + $1.expectations.filter { !$0.passed }.count }
        let time = results.reduce(0) { $0 + $1.seconds }
        var x = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        x += #"<testsuites name="ipcemu scenarios" tests="\#(tests)" failures="\#(failures)" time="\#(seconds(time))">"# + "\n"
        for r in results { x += suite(r) }
        x += "</testsuites>\n"
        return x
    }

    static func suite(_ r: ScenarioResult) -> String {
        let className = "scenario." + r.scenario.name
        let failedExpectations = r.expectations.filter { !$0.passed }.count
        let stamp = ISO8601DateFormatter().string(from: r.startedAt)
        var x = #"  <testsuite name="\#(esc(r.scenario.name))" tests="\#(1 + r.expectations.count)" "#
            + #"failures="\#((r.passed ? 0 : 1) + failedExpectations)" errors="0" time="\#(seconds(r.seconds))" "#
            + #"timestamp="\#(stamp)" file="\#(esc(r.scenario.file))">"# + "\n"
        x += "    <properties>\n"
        for (k, v) in [("app", r.appMode.rawValue), ("broker", r.brokerURL), ("calls", String(r.calls.count))] {
            x += #"      <property name="\#(k)" value="\#(esc(v))"/>"# + "\n"
        }
        x += "    </properties>\n"
        x += #"    <testcase classname="\#(esc(className))" name="run" time="\#(seconds(r.seconds))">"#
        if !r.passed {
            let lines = ([r.setupError].compactMap { $0 } + r.failures.compactMap(\.failure))
            let first = lines.first ?? "failed"
            x += "\n" + #"      <failure message="\#(esc(first))" type="\#(r.setupError == nil ? "StepFailed" : "SetupFailed")">"#
                + esc(lines.joined(separator: "\n")) + "</failure>\n    "
        }
        x += "</testcase>\n"
        for e in r.expectations {
            x += #"    <testcase classname="\#(esc(className))" name="\#(esc(e.title))" time="\#(seconds(e.seconds))">"#
            if !e.passed {
                let message = e.failure ?? "failed"
                x += "\n" + #"      <failure message="\#(esc(message))" type="ExpectationFailed">"# + esc(message) + "</failure>\n    "
            }
            x += "</testcase>\n"
        }
        if !r.observations.isEmpty {
            let t0 = r.startedAt
            let log = r.observations.map { String(format: "%8.3f ", $0.time.timeIntervalSince(t0)) + "[\($0.device)] " + $0.shortText }
            x += "    <system-out>" + esc(log.joined(separator: "\n")) + "</system-out>\n"
        }
        x += "  </testsuite>\n"
        return x
    }

    static func seconds(_ s: Double) -> String { String(format: "%.3f", s) }

    /// XML text/attribute escaping; characters XML 1.0 cannot hold are dropped.
    static func esc(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n", "\t": out.unicodeScalars.append(u)
            case "\r": out += "&#13;"
            default:
                let v = u.value
                if v >= 0x20 && !(0xFFFE...0xFFFF).contains(v) { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
}
