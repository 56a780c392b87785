import Foundation

/// Inline SVG line/point charts for the HTML report (no scripts, no fonts, no network).
enum SVGChart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    struct Limit {
        var name: String
        var value: Double
        var color: String
    }

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]

    static func chart(id: String, title: String, xLabel: String, yLabel: String, series: [Series], limits: [Limit],
                      empty: String, width: Double = 590, height: Double = 290) -> String {
        let left = 62.0, right = 16.0, top = 34.0, bottom = 62.0
        let plotW = width - left - right, plotH = height - top - bottom
        var s = #"<svg id="\#(id)" class="plot" xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-label="\#(htmlEscape(title))">"#
        s += #"<rect x="0" y="0" width="\#(Int(width))" height="\#(Int(height))" fill='#fff'/>"#
        s += #"<text x="\#(Int(width / 2))" y="20" text-anchor="middle" font-size="14" font-weight="bold">\#(htmlEscape(title))</text>"#
        let all = series.flatMap(\.points)
        guard !all.isEmpty else {
            s += #"<rect x="\#(left)" y="\#(top)" width="\#(plotW)" height="\#(plotH)" fill="none" stroke='#bbb'/>"#
            s += #"<text x="\#(Int(left + plotW / 2))" y="\#(Int(top + plotH / 2))" text-anchor="middle" font-size="13" fill='#777'>\#(htmlEscape(empty))</text></svg>"#
            return s
        }
        let xs = all.map(\.x), ys = all.map(\.y) + limits.map(\.value)
        var (x0, x1) = (xs.min() ?? 0, xs.max() ?? 1)
        if x1 - x0 < 1e-9 { x0 -= 1; x1 += 1 }
        let (yTicks, yMax) = ticks(upTo: (ys.max() ?? 1) * 1.1)
        let (xTicks, _) = ticks(from: x0, to: x1)
        func px(_ x: Double) -> Double { left + (x - x0) / (x1 - x0) * plotW }
        func py(_ y: Double) -> Double { top + plotH - (y / yMax) * plotH }
        // Grid and axes.
        for t in yTicks {
            let y = py(t)
            s += #"<line x1="\#(f(left))" y1="\#(f(y))" x2="\#(f(left + plotW))" y2="\#(f(y))" stroke='#e5e5e5'/>"#
            s += #"<text x="\#(f(left - 6))" y="\#(f(y + 4))" text-anchor="end" font-size="11">\#(label(t))</text>"#
        }
        for t in xTicks where t >= x0 - 1e-9 && t <= x1 + 1e-9 {
            let x = px(t)
            s += #"<line x1="\#(f(x))" y1="\#(f(top + plotH))" x2="\#(f(x))" y2="\#(f(top + plotH + 4))" stroke='#333'/>"#
            s += #"<text x="\#(f(x))" y="\#(f(top + plotH + 17))" text-anchor="middle" font-size="11">\#(label(t))</text>"#
        }
        s += #"<line x1="\#(f(left))" y1="\#(f(top))" x2="\#(f(left))" y2="\#(f(top + plotH))" stroke='#333'/>"#
        s += #"<line x1="\#(f(left))" y1="\#(f(top + plotH))" x2="\#(f(left + plotW))" y2="\#(f(top + plotH))" stroke='#333'/>"#
        s += #"<text x="\#(f(left + plotW / 2))" y="\#(f(top + plotH + 34))" text-anchor="middle" font-size="12">\#(htmlEscape(xLabel))</text>"#
        s += #"<text transform="translate(16 \#(f(top + plotH / 2))) rotate(-90)" text-anchor="middle" font-size="12">\#(htmlEscape(yLabel))</text>"#
        // Limits.
        for l in limits {
            let y = py(l.value)
            s += #"<line class="limit" x1="\#(f(left))" y1="\#(f(y))" x2="\#(f(left + plotW))" y2="\#(f(y))" stroke="\#(l.color)" stroke-dasharray="6 4" stroke-width="1.5"/>"#
            s += #"<text x="\#(f(left + plotW - 4))" y="\#(f(y - 4))" text-anchor="end" font-size="11" fill="\#(l.color)">\#(htmlEscape(l.name))</text>"#
        }
        // Series.
        for se in series where !se.points.isEmpty {
            let pts = se.points.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
            if se.points.count > 1 {
                s += #"<polyline class="series" fill="none" stroke="\#(se.color)" stroke-width="1.8" points="\#(pts)"/>"#
            }
            for p in se.points where se.points.count <= 200 {
                s += #"<circle cx="\#(f(px(p.x)))" cy="\#(f(py(p.y)))" r="3" fill="\#(se.color)"><title>\#(htmlEscape(se.name)): \#(label(p.y))</title></circle>"#
            }
        }
        // Legend.
        var lx = left
        let ly = height - 12
        for se in series.prefix(6) {
            s += #"<rect x="\#(f(lx))" y="\#(f(ly - 9))" width="10" height="10" fill="\#(se.color)"/>"#
            s += #"<text x="\#(f(lx + 14))" y="\#(f(ly))" font-size="11">\#(htmlEscape(se.name))</text>"#
            lx += 22 + Double(se.name.count) * 6.2
        }
        if series.count > 6 { s += #"<text x="\#(f(lx))" y="\#(f(ly))" font-size="11">+\#(series.count - 6) more</text>"# }
        return s + "</svg>"
    }

    /// Ticks from 0 up to at least `max`: steps of 1, 2 or 5 x 10^k; returns them and the top.
    static func ticks(upTo max: Double) -> ([Double], Double) {
        let top = max > 0 && max.isFinite ? max : 1
        let step = niceStep(top / 5)
        let count = Int((top / step).rounded(.up))
        let values = (0...Swift.max(count, 1)).map { Double($0) * step }
        return (values, values.last ?? top)
    }

    static func ticks(from a: Double, to b: Double) -> ([Double], Double) {
        let step = niceStep((b - a) / 6)
        var t = (a / step).rounded(.up) * step
        var out: [Double] = []
        while t <= b + 1e-9, out.count < 50 {
            out.append(t)
            t += step
        }
        return (out, step)
    }

    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        let magnitude = pow(10, floor(log10(raw)))
        let n = raw / magnitude
        return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * magnitude
    }

    static func label(_ v: Double) -> String {
        if abs(v) >= 100 || v == v.rounded() { return String(Int(v.rounded())) }
        return String(format: "%.1f", v)
    }

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }
}

/// HTML/SVG text escaping.
func htmlEscape(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(c)
        }
    }
    return out
}
