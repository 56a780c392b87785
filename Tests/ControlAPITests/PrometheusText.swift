/// A strict parser of the Prometheus text exposition format 0.0.4, for the tests: every sample
/// belongs to a family declared by `# TYPE` before it, names and labels are well-formed, values
/// are numbers, no series appears twice, and histograms are consistent.
struct PrometheusText {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var why: String
        var description: String { "line \(line): \(why)" }
    }

    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    var samples: [Sample] = []

    init(_ text: String) throws {
        var seen = Set<String>()
        guard text.hasSuffix("\n") else { throw ParseError(line: 0, why: "the exposition must end with a newline") }
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let n = i + 1
            let line = String(raw)
            if line.hasPrefix("# HELP ") {
                let parts = line.dropFirst(7).split(separator: " ", maxSplits: 1)
                guard let name = parts.first, Self.validName(String(name)) else { throw ParseError(line: n, why: "bad HELP") }
                helps[String(name)] = parts.count > 1 ? String(parts[1]) : ""
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, Self.validName(String(parts[0])),
                      ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1]) else {
                    throw ParseError(line: n, why: "bad TYPE: \(line)")
                }
                guard types[String(parts[0])] == nil else { throw ParseError(line: n, why: "TYPE twice for \(parts[0])") }
                types[String(parts[0])] = String(parts[1])
                continue
            }
            if line.hasPrefix("#") { continue }
            guard !line.isEmpty else { throw ParseError(line: n, why: "empty line") }
            let sample = try Self.sample(line, n)
            guard let family = family(of: sample.name) else {
                throw ParseError(line: n, why: "\(sample.name) has no # TYPE before it")
            }
            if types[family] == "histogram", !sample.name.hasSuffix("_bucket"), !sample.name.hasSuffix("_sum"), !sample.name.hasSuffix("_count") {
                throw ParseError(line: n, why: "histogram \(family) has a bare sample")
            }
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            guard seen.insert(key).inserted else { throw ParseError(line: n, why: "series twice: \(key)") }
            samples.append(sample)
        }
        try checkHistograms()
    }

    func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return nil
    }

    func value(_ name: String, _ labels: [String: String]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    static func validName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first == "_" || first == ":" || (first.properties.isAlphabetic && first.isASCII) else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":") }
    }

    static func sample(_ line: String, _ n: Int) throws -> Sample {
        var chars = Substring(line)
        var name = ""
        while let c = chars.first, c != "{", c != " " { name.append(c); chars.removeFirst() }
        guard validName(name) else { throw ParseError(line: n, why: "bad metric name '\(name)'") }
        var labels: [String: String] = [:]
        if chars.first == "{" {
            chars.removeFirst()
            while chars.first != "}" {
                var key = ""
                while let c = chars.first, c != "=" { key.append(c); chars.removeFirst() }
                guard validName(key), !key.hasPrefix("__"), chars.first == "=" else { throw ParseError(line: n, why: "bad label name") }
                chars.removeFirst()
                guard chars.first == "\"" else { throw ParseError(line: n, why: "label value must be quoted") }
                chars.removeFirst()
                var value = ""
                while true {
                    guard let c = chars.first else { throw ParseError(line: n, why: "unterminated label value") }
                    chars.removeFirst()
                    if c == "\"" { break }
                    if c == "\\" {
                        guard let e = chars.first else { throw ParseError(line: n, why: "bad escape") }
                        chars.removeFirst()
                        switch e {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw ParseError(line: n, why: "bad escape \\\(e)")
                        }
                    } else {
                        value.append(c)
                    }
                }
                guard labels[key] == nil else { throw ParseError(line: n, why: "label \(key) twice") }
                labels[key] = value
                if chars.first == "," { chars.removeFirst() } else if chars.first != "}" { throw ParseError(line: n, why: "expected , or }") }
            }
            chars.removeFirst()
        }
        guard chars.first == " " else { throw ParseError(line: n, why: "expected a space before the value") }
        chars.removeFirst()
        let parts = chars.split(separator: " ")
        guard parts.count == 1 || parts.count == 2 else { throw ParseError(line: n, why: "bad value/timestamp") }
        let text = String(parts[0])
        let value: Double
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let v = Double(text) else { throw ParseError(line: n, why: "value '\(text)' is not a number") }
            value = v
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// Buckets cumulative and non-decreasing in `le`, a `+Inf` bucket equal to `_count`.
    func checkHistograms() throws {
        for (family, type) in types where type == "histogram" {
            var series: [[String: String]: [(Double, Double)]] = [:]
            for s in samples where s.name == family + "_bucket" {
                guard let le = s.labels["le"] else { throw ParseError(line: 0, why: "\(family) bucket without le") }
                var rest = s.labels
                rest["le"] = nil
                let bound = le == "+Inf" ? Double.infinity : (Double(le) ?? .nan)
                guard !bound.isNaN else { throw ParseError(line: 0, why: "bad le \(le)") }
                series[rest, default: []].append((bound, s.value))
            }
            for (labels, buckets) in series {
                let sorted = buckets.sorted { $0.0 < $1.0 }
                guard sorted.last?.0 == .infinity else { throw ParseError(line: 0, why: "\(family)\(labels) has no +Inf bucket") }
                for i in sorted.indices.dropFirst() where sorted[i].1 < sorted[i - 1].1 {
                    throw ParseError(line: 0, why: "\(family)\(labels) buckets decrease")
                }
                guard let count = value(family + "_count", labels), count == sorted.last?.1,
                      value(family + "_sum", labels) != nil else {
                    throw ParseError(line: 0, why: "\(family)\(labels): _count must equal the +Inf bucket and _sum must exist")
                }
            }
        }
    }
}
