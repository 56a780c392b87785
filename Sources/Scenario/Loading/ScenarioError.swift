import Yams

/// The first mistake in a scenario file: where (file, line, field path) and what was expected.
/// `description` reads `file:line: field: message`, like profile errors (docs/profiles.md).
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    /// Dotted path (`steps[3].expect.answered`); empty for the file as a whole.
    public var field: String
    public var message: String

    public init(file: String, line: Int?, field: String, message: String) {
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": "
        if !field.isEmpty { s += field + ": " }
        return s + message
    }
}

/// Typed reading of Yams nodes that throws the first mistake with its line and field path.
struct NodeReader {
    let file: String

    func fail(_ node: Node?, _ field: String, _ message: String) -> ScenarioError {
        ScenarioError(file: file, line: node?.mark?.line, field: field, message: message)
    }

    func mapping(_ node: Node, _ field: String, allowed: [String]) throws(ScenarioError) -> Fields {
        guard case .mapping(let m) = node else {
            throw fail(node, field, "expected a mapping with keys \(allowed.joined(separator: ", ")), got \(describe(node))")
        }
        var values: [(String, Node, Node)] = []
        for (k, v) in m {
            guard case .scalar(let s) = k else { throw fail(k, field, "expected a key name, got \(describe(k))") }
            let key = s.string
            let path = field.isEmpty ? key : field + "." + key
            if values.contains(where: { $0.0 == key }) { throw fail(k, path, "duplicate key '\(key)'") }
            guard allowed.contains(key) else {
                var message = "unknown key '\(key)'"
                if let guess = closest(key, allowed) { message += "; did you mean '\(guess)'?" }
                throw fail(k, path, message + " (expected one of: \(allowed.joined(separator: ", ")))")
            }
            values.append((key, k, v))
        }
        return Fields(reader: self, path: field, node: node, values: values)
    }

    func string(_ node: Node, _ field: String) throws(ScenarioError) -> String {
        guard case .scalar(let s) = node, node.tagName != .null, !s.string.isEmpty else {
            throw fail(node, field, "expected a string, got \(describe(node))")
        }
        return s.string
    }

    func int(_ node: Node, _ field: String, _ range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        guard node.tagName == .int, let v = node.int else {
            throw fail(node, field, "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(describe(node))")
        }
        guard range.contains(v) else {
            throw fail(node, field, "expected an integer from \(range.lowerBound) to \(range.upperBound), got \(v)")
        }
        return v
    }

    /// A finite number (int or float) within `range`.
    func number(_ node: Node, _ field: String, _ range: ClosedRange<Double>, unit: String = "seconds") throws(ScenarioError) -> Double {
        let value: Double?
        switch node.tagName {
        case .int: value = node.int.map(Double.init)
        case .float: value = node.float
        default: value = nil
        }
        let noun = "a number of \(unit) from \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound))"
        guard let value, value.isFinite else { throw fail(node, field, "expected \(noun), got \(describe(node))") }
        guard range.contains(value) else { throw fail(node, field, "expected \(noun), got \(formatNumber(value))") }
        return value
    }

    func bool(_ node: Node, _ field: String) throws(ScenarioError) -> Bool {
        guard node.tagName == .bool, let v = node.bool else {
            throw fail(node, field, "expected true or false, got \(describe(node))")
        }
        return v
    }

    func oneOf(_ node: Node, _ field: String, _ choices: [String]) throws(ScenarioError) -> String {
        let text = try string(node, field)
        guard choices.contains(text) else {
            var message = "expected one of \(choices.joined(separator: ", ")), got '\(text)'"
            if let guess = closest(text, choices) { message += " (did you mean '\(guess)'?)" }
            throw fail(node, field, message)
        }
        return text
    }

    func list(_ node: Node, _ field: String) throws(ScenarioError) -> [(Node, String)] {
        guard case .sequence(let seq) = node else { throw fail(node, field, "expected a list, got \(describe(node))") }
        return seq.enumerated().map { ($0.element, "\(field)[\($0.offset)]") }
    }

    func strings(_ node: Node, _ field: String) throws(ScenarioError) -> [String] {
        var out: [String] = []
        for (n, p) in try list(node, field) { out.append(try string(n, p)) }
        return out
    }

    /// `2`, `{fixed: 2}`, `{uniform: [1, 3]}`, `{exponential: 2}` (the mean), seconds.
    func distribution(_ node: Node, _ field: String) throws(ScenarioError) -> Distribution {
        if case .scalar = node { return .fixed(try number(node, field, 0...3600)) }
        let f = try mapping(node, field, allowed: ["fixed", "uniform", "exponential"])
        guard f.count == 1, let (key, value) = f.first else {
            throw fail(node, field, "expected exactly one of fixed, uniform, exponential")
        }
        let path = f.field(key)
        switch key {
        case "fixed": return .fixed(try number(value, path, 0...3600))
        case "exponential": return .exponential(mean: try number(value, path, 0.001...3600))
        default:
            let items = try list(value, path)
            guard items.count == 2 else { throw fail(value, path, "expected [min, max] in seconds, got \(items.count) items") }
            let a = try number(items[0].0, items[0].1, 0...3600)
            let b = try number(items[1].0, items[1].1, 0...3600)
            guard a <= b else { throw fail(value, path, "expected min <= max, got [\(formatNumber(a)), \(formatNumber(b))]") }
            return .uniform(a, b)
        }
    }
}

/// The keys of one mapping, checked for unknown and duplicate names.
struct Fields {
    let reader: NodeReader
    let path: String
    let node: Node
    let values: [(String, Node, Node)]

    var count: Int { values.count }
    var first: (String, Node)? { values.first.map { ($0.0, $0.2) } }
    var keys: [String] { values.map(\.0) }
    func field(_ key: String) -> String { path.isEmpty ? key : path + "." + key }
    subscript(_ key: String) -> Node? { values.first { $0.0 == key }?.2 }

    func required(_ key: String, _ expected: String) throws(ScenarioError) -> Node {
        guard let n = self[key] else {
            throw reader.fail(node, field(key), "missing required field '\(key)': expected \(expected)")
        }
        return n
    }
}

/// How a node reads in a message.
func describe(_ node: Node) -> String {
    switch node {
    case .mapping: return "a mapping"
    case .sequence: return "a list"
    case .scalar(let s):
        if node.tagName == .null { return "an empty value" }
        switch s.style {
        case .singleQuoted, .doubleQuoted: return "\"\(s.string)\" (a quoted string)"
        default: return "'\(s.string)'"
        }
    }
}

/// A near spelling among `choices` (case, or at most 2 edits), for did-you-mean hints.
func closest(_ word: String, _ choices: [String]) -> String? {
    if let same = choices.first(where: { $0.lowercased() == word.lowercased() }) { return same }
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                row[j] = Swift.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = row
        }
        return prev[b.count]
    }
    let w = Array(word.lowercased())
    let best = choices.map { ($0, distance(w, Array($0.lowercased()))) }.min { $0.1 < $1.1 }
    guard let best, best.1 <= 2, best.1 < w.count else { return nil }
    return best.0
}

extension Node {
    var tagName: Tag.Name { Tag.Name(rawValue: tag.description) }
}
