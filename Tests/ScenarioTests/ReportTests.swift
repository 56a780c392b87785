import Foundation
import Scenario
import Testing
import TestSupport

extension Scenarios {
    @Suite("HTML report") struct Report {
        @Test("the report is self-contained: one sequence diagram per call, two plots, no script, no external reference")
        func reportShape() async throws {
            let s = try Scenario.load(path: scenariosFolder + "/hangup-both-ways.yaml")
            let r = await ScenarioRunner.run(s, appMode: .simulated)
            expectPassed(r)
            let page = HTMLReport.html([r])
            #expect(r.calls.count == 2)
            #expect(page.components(separatedBy: "<svg id=\"seq-0-").count - 1 == r.calls.count)
            #expect(page.contains("id=\"plot-latency-0\""))
            #expect(page.contains("id=\"plot-fps-0\""))
            #expect(!page.contains("<script"))
            let stripped = page.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
            #expect(!stripped.contains("http://") && !stripped.contains("https://"))
            #expect(page.contains(">hang_up<"), "arrows are labelled with the event")
            #expect(page.contains("answer limit 2 s"), "the latency plot draws the expectation's limit")
        }

        @Test("headless Chromium shows the sequence diagram and the plots of a shipped scenario's report",
              .enabled(if: onPath("chromium") != nil && onPath("python3") != nil))
        func reportInChromium() async throws {
            let s = try Scenario.load(path: scenariosFolder + "/press-app-answers.yaml")
            let r = await ScenarioRunner.run(s, appMode: .simulated)
            expectPassed(r)
            let file = NSTemporaryDirectory() + "ipcemu-report-\(UInt32.random(in: 0...UInt32.max)).html"
            try HTMLReport.html([r]).write(toFile: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            var args = [packageRootPath + "/scripts/report-check.py", file]
            if let shot = ProcessInfo.processInfo.environment["IPCEMU_REPORT_SCREENSHOT"] { args += ["--screenshot", shot] }
            let run = try await runProgram(try #require(onPath("python3")), args)
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            let seen = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(seen["verdict"] as? String == "PASS")
            #expect((seen["sequenceVisible"] as? Int ?? 0) >= 1)
            #expect((seen["arrowsInFirst"] as? Int ?? 0) >= 5, "call, ring, answer, heartbeats, hang_up")
            #expect(seen["plotsVisible"] as? Int == 2)
            #expect((seen["seriesDrawn"] as? [Int] ?? []).allSatisfy { $0 > 0 })
            #expect((seen["limitLines"] as? [Int] ?? []).allSatisfy { $0 > 0 }, "each plot draws its limits")
            #expect((seen["resourcesLoaded"] as? [String])?.isEmpty == true)
        }
    }
}
