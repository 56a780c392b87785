import Foundation

/// The self-contained HTML report: verdict, failures, expectations against their limits, plots of
/// latencies and frame rates, and a sequence diagram per call. Inline CSS and SVG only: no
/// scripts, no fonts, no network.
public enum HTMLReport {
    /// Calls drawn per scenario (a load campaign can have thousands; the plots still show all).
    public static let maxDiagrams = 30

    public static func html(_ results: [ScenarioResult]) -> String {
        let passed = results.allSatisfy(\.passed)
        let title = results.count == 1 ? (results.first?.scenario.name ?? "scenario") : "\(results.count) scenarios"
        var h = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>ipcemu scenario report: \(htmlEscape(title))</title>
            <style>
            body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
            h1{font-size:22px;margin:0 0 6px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
            h3{font-size:15px;margin:18px 0 6px}
            .pass{color:#1e7e34;font-weight:bold} .fail{color:#c0392b;font-weight:bold}
            table{border-collapse:collapse;font-size:13px;margin:6px 0} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
            th{background:#f4f6f8} .meta{font-size:13px;color:#555} .failures li{color:#c0392b;font-size:13px;margin:3px 0}
            .plots{display:flex;flex-wrap:wrap;gap:16px} svg{border:1px solid #e3e3e3;background:#fff}
            .bar{display:inline-block;height:9px;background:#5b9bd5;vertical-align:middle} .bar.over{background:#c0392b}
            </style></head><body>
            <h1>ipcemu scenario report: \(htmlEscape(title)) <span class="\(passed ? "pass" : "fail")">\(passed ? "PASS" : "FAIL")</span></h1>

            """
        for (i, r) in results.enumerated() { h += section(r, number: i) }
        return h + "</body></html>\n"
    }

    static func section(_ r: ScenarioResult, number: Int) -> String {
        let f = ISO8601DateFormatter()
        var h = "<section class=\"scenario\" id=\"scenario-\(number)\">"
        h += "<h2>\(htmlEscape(r.scenario.name)) <span class=\"\(r.passed ? "pass" : "fail")\">\(r.passed ? "PASS" : "FAIL")</span></h2>"
        if let d = r.scenario.description { h += "<p>\(htmlEscape(d))</p>" }
        h += "<p class=\"meta\">\(htmlEscape(r.scenario.file)) &middot; app \(r.appMode.rawValue) &middot; broker \(htmlEscape(r.brokerURL)) &middot; "
            + "started \(f.string(from: r.startedAt)) &middot; \(String(format: "%.1f", r.seconds)) s &middot; "
            + "\(r.scenario.devices.count) device(s) &middot; \(r.calls.count) call(s) &middot; \(r.steps.count) steps run</p>"
        let problems = [r.setupError].compactMap { $0 } + r.failures.compactMap(\.failure)
        if !problems.isEmpty {
            h += "<h3>Failures</h3><ul class=\"failures\">" + problems.map { "<li>\(htmlEscape($0))</li>" }.joined() + "</ul>"
        }
        h += expectations(r)
        h += "<h3>Plots</h3><div class=\"plots\">" + latencyPlot(r, number) + fpsPlot(r, number) + "</div>"
        h += "<h3>Calls</h3>"
        if r.calls.isEmpty { h += "<p class=\"meta\">No call in this run.</p>" }
        h += callTable(r)
        for (i, c) in r.calls.prefix(maxDiagrams).enumerated() {
            h += "<h3>Call \(i + 1): \(htmlEscape(c.device)) session \(htmlEscape(c.session))</h3>"
            h += SequenceDiagram.svg(c, id: "seq-\(number)-\(i + 1)")
        }
        if r.calls.count > maxDiagrams {
            h += "<p class=\"meta\">\(r.calls.count - maxDiagrams) more calls are in the table and the plots but not drawn.</p>"
        }
        return h + "</section>"
    }

    static func expectations(_ r: ScenarioResult) -> String {
        let e = r.expectations
        guard !e.isEmpty else { return "" }
        var h = "<h3>Expectations</h3><table><tr><th>step</th><th>device</th><th>iteration</th><th>expected</th><th>measured</th><th>against the limit</th><th></th></tr>"
        for x in e {
            var measured = "", bar = ""
            if let m = x.measure {
                measured = "\(format(m.value)) \(m.unit) (limit \(m.atMost ? "&le;" : "&ge;") \(format(m.limit)) \(m.unit))"
                let ratio = m.limit > 0 ? min(m.value / m.limit, 2) : 0
                let over = m.atMost ? m.value > m.limit : m.value < m.limit * 0.8
                bar = "<span class=\"bar\(over ? " over" : "")\" style=\"width:\(Int(ratio * 80))px\"></span> \(Int((m.value / max(m.limit, 1e-9)) * 100))%"
            }
            h += "<tr><td>\(x.step.label) (line \(x.step.line))</td><td>\(htmlEscape(x.device))</td><td>\(x.iteration.map(String.init).joined(separator: "."))</td>"
                + "<td>\(htmlEscape(x.step.name ?? x.step.kind.summary))</td><td>\(measured)</td><td>\(bar)</td>"
                + "<td class=\"\(x.passed ? "pass" : "fail")\">\(x.passed ? "pass" : "FAIL")</td></tr>"
        }
        return h + "</table>"
    }

    static func callTable(_ r: ScenarioResult) -> String {
        guard !r.calls.isEmpty else { return "" }
        var h = "<table><tr><th>#</th><th>device</th><th>session</th><th>start (s)</th><th>call &rarr; ring</th><th>call &rarr; answer</th><th>answer &rarr; video</th><th>end</th></tr>"
        for (i, c) in r.calls.enumerated() {
            var end = "-"
            if let e = c.ended {
                end = e.outcome.rawValue
                if let reason = e.reason { end += " (\(reason.rawValue))" }
            }
            let start = String(format: "%.2f", c.start.timeIntervalSince(r.startedAt))
            let ring: String = c.ringLatency.map { "\(Int($0 * 1000)) ms" } ?? "-"
            let answer: String = c.answerLatency.map { "\(Int($0 * 1000)) ms" } ?? "-"
            let video: String = c.firstFrameMs.map { "&le; \(Int($0)) ms" } ?? "-"
            h += "<tr><td>\(i + 1)</td><td>\(htmlEscape(c.device))</td><td>\(htmlEscape(c.session))</td><td>\(start)</td>"
            h += "<td>\(ring)</td><td>\(answer)</td><td>\(video)</td><td>\(htmlEscape(end))</td></tr>"
        }
        return h + "</table>"
    }

    static func latencyPlot(_ r: ScenarioResult, _ n: Int) -> String {
        let calls = Array(r.calls.enumerated())
        let ring = calls.compactMap { i, c in c.ringLatency.map { (x: Double(i + 1), y: $0 * 1000) } }
        let answer = calls.compactMap { i, c in c.answerLatency.map { (x: Double(i + 1), y: $0 * 1000) } }
        let video = r.expectations.compactMap { e -> Double? in
            if case .expect(.videoStarted, _) = e.step.kind { return e.measure?.value } else { return nil }
        }.enumerated().map { (x: Double($0.offset + 1), y: $0.element) }
        var limits: [SVGChart.Limit] = []
        for e in r.expectations {
            guard let m = e.measure else { continue }
            if case .expect(.answered(let s), _) = e.step.kind, !limits.contains(where: { $0.name.hasPrefix("answer limit") }) {
                limits.append(.init(name: "answer limit \(formatNumber(s)) s", value: s * 1000, color: "#d62728"))
            }
            if case .expect(.videoStarted, _) = e.step.kind, !limits.contains(where: { $0.name.hasPrefix("video limit") }) {
                limits.append(.init(name: "video limit \(formatNumber(m.limit)) ms", value: m.limit, color: "#2ca02c"))
            }
        }
        let p = SVGChart.palette
        return SVGChart.chart(id: "plot-latency-\(n)", title: "Latencies per call", xLabel: "call number", yLabel: "milliseconds",
                              series: [.init(name: "call → ring", color: p[0], points: ring),
                                       .init(name: "call → answer", color: p[3], points: answer),
                                       .init(name: "answer → first frame", color: p[2], points: video)].filter { !$0.points.isEmpty },
                              limits: limits, empty: "no call answered in this run")
    }

    static func fpsPlot(_ r: ScenarioResult, _ n: Int) -> String {
        var order: [String] = []
        var points: [String: [(x: Double, y: Double)]] = [:]
        for o in r.observations {
            guard case .video(let session, let user, _, let fps) = o.kind else { continue }
            let key = "\(user ?? "device sends") · …\(session.suffix(6))"
            if points[key] == nil { order.append(key) }
            points[key, default: []].append((x: o.time.timeIntervalSince(r.startedAt), y: fps))
        }
        // The first sample of a link has no interval behind it.
        let series = order.enumerated().map { i, k in
            SVGChart.Series(name: k, color: SVGChart.palette[i % SVGChart.palette.count], points: Array((points[k] ?? []).dropFirst()))
        }
        var limits: [SVGChart.Limit] = []
        for e in r.expectations {
            if case .expect(.frames(_, let fps?, _), _) = e.step.kind, !limits.contains(where: { $0.value == fps * 0.8 }) {
                limits.append(.init(name: "\(formatNumber(fps)) fps - 20%", value: fps * 0.8, color: "#d62728"))
            }
        }
        return SVGChart.chart(id: "plot-fps-\(n)", title: "Video frame rate over the run", xLabel: "seconds since the start",
                              yLabel: "frames per second", series: series, limits: limits, empty: "no video in this run")
    }

    static func format(_ v: Double) -> String { v >= 100 ? String(Int(v.rounded())) : String(format: "%.2f", v) }
}
