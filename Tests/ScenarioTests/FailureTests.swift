import Foundation
import Scenario
import Testing
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

extension Scenarios {
    @Suite("Failures, JUnit XML") struct Failures {
        /// The device answers after 1 s, the scenario demands 0.2 s; a later reason check fails too.
        static let failing = """
            name: deliberately-failing
            devices:
              profile: profiles/doorbell-qa.yaml
              answerPolicy: answer
              answerDelay: 1
            apps:
              - user: user-alice
            steps:
              - call: {from: user-alice, timeout: 10}
              - expect: {answered: 0.2}
              - wait: {state: answered, timeout: 3}
              - hangup: user-alice
              - expect: {ended: busy, within: 3}
              - expect: {received: hang_up, from: user-alice}
            """

        @Test("a failing expectation names the step, what was expected and what was seen; the run goes on")
        func failingExpectation() async throws {
            let s = try scenario(Self.failing, name: "failing.yaml")
            let result = await ScenarioRunner.run(s, appMode: .simulated)
            expectFailed(result)
            let failures = result.failures.compactMap(\.failure)
            #expect(failures.count == 2, "\(failures)")
            let answered = try #require(failures.first)
            #expect(answered.contains("step 2 (line 10, expect answered within 0.2 s) on qa-doorbell-0001"), "\(answered)")
            #expect(answered.contains("expected answered within 0.2 s"), "\(answered)")
            #expect(answered.contains("no answer after") || answered.contains("answered after"), "\(answered)")
            let ended = try #require(failures.last)
            #expect(ended.contains("step 5 (line 13"), "\(ended)")
            #expect(ended.contains("expected call ended with reason busy"), "\(ended)")
            #expect(ended.contains("ended hungUp without a reason"), "\(ended)")
            // The last expectation ran after the failures and passed.
            #expect(result.expectations.last?.passed == true)
            #expect(result.summaryText.hasPrefix("FAIL deliberately-failing"))
        }

        @Test("a failed wait stops the device's remaining steps")
        func failedWaitStops() async throws {
            let s = try scenario("""
                name: wait-fails
                devices: {profile: profiles/doorbell-qa.yaml}
                steps:
                  - wait: {state: answered, timeout: 0.3}
                  - press: household
                """)
            let result = await ScenarioRunner.run(s, appMode: .external)
            expectFailed(result)
            #expect(result.steps.count == 1)
            #expect(result.failures.first?.failure?.contains("expected call state answered within 0.3 s; the call state was idle") == true,
                    "\(result.failures.first?.failure ?? "")")
        }

        @Test("JUnit XML parses, with one test case per run and per expectation and the failures in place")
        func junitParses() async throws {
            let s = try scenario(Self.failing, name: "failing.yaml")
            let result = await ScenarioRunner.run(s, appMode: .simulated)
            let xml = JUnitReport.xml([result])
            let seen = try JUnitShape.parse(xml)
            #expect(seen.suites == 1)
            #expect(seen.testcases.count == 1 + result.expectations.count)
            #expect(seen.testcases.first == "run")
            #expect(seen.failures.count == 3, "the run and two expectations: \(seen.failures)")
            #expect(seen.failures.contains { $0.contains("expected answered within 0.2 s") })
            #expect(seen.rootAttributes["tests"] == String(1 + result.expectations.count))
            #expect(seen.rootAttributes["failures"] == "3")
            #expect(seen.systemOut.contains("<- call from user-alice"))
        }

        @Test("JUnit XML escapes what it quotes")
        func junitEscapes() throws {
            let s = try scenario("""
                name: "odd <name> & \\"quotes\\""
                devices: {profile: profiles/doorbell-qa.yaml}
                steps: [{sleep: 0}]
                """)
            let now = Date()
            let r = ScenarioResult(scenario: s, appMode: .external, brokerURL: "mqtt://a&b", startedAt: now, endedAt: now,
                                   setupError: "bad \u{1} byte <here>", steps: [], observations: [], calls: [])
            let seen = try JUnitShape.parse(JUnitReport.xml([r]))
            #expect(seen.suiteNames == [#"odd <name> & "quotes""#])
            #expect(seen.failures == ["bad  byte <here>"])
        }
    }
}

/// What an XML parser reads back from a JUnit file.
final class JUnitShape: NSObject, XMLParserDelegate {
    var suites = 0
    var suiteNames: [String] = []
    var testcases: [String] = []
    var failures: [String] = []
    var rootAttributes: [String: String] = [:]
    var systemOut = ""
    private var inOut = false

    static func parse(_ xml: String) throws -> JUnitShape {
        let shape = JUnitShape()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = shape
        guard parser.parse() else {
            throw ScenarioActionError("not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?") at line \(parser.lineNumber)")
        }
        return shape
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        switch name {
        case "testsuites": rootAttributes = attributes
        case "testsuite":
            suites += 1
            suiteNames.append(attributes["name"] ?? "")
        case "testcase": testcases.append(attributes["name"] ?? "")
        case "failure": failures.append(attributes["message"] ?? "")
        case "system-out": inOut = true
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "system-out" { inOut = false }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inOut { systemOut += string }
    }
}
