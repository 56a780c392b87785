import Yams

// Typed, path-aware reading of Yams nodes. Every accessor records what is wrong (with the node's
// mark and the field's path) and returns nil instead of throwing, so one pass finds every
// independent mistake; the parser then reports the first one in the file.

/// Collects mistakes while a profile is read.
final class Diagnostics {
    let file: String
    private(set) var errors: [ProfileError] = []
    /// Fields that were read but do not apply (kept, ignored, reported).
    private(set) var warnings: [ProfileWarning] = []

    init(file: String) { self.file = file }

    var isEmpty: Bool { errors.isEmpty }

    func add(_ kind: ProfileError.Kind, at mark: Mark?, field: String, _ message: String) {
        errors.append(ProfileError(
            kind: kind, file: file, line: mark?.line, column: mark?.column, field: field, message: message))
    }

    func warn(at mark: Mark?, field: String, _ message: String) {
        warnings.append(ProfileWarning(file: file, line: mark?.line, column: mark?.column, field: field, message: message))
    }

    /// The first mistake by position in the file (unplaced ones last, then in the order found).
    var first: ProfileError? {
        errors.enumerated().min { a, b in
            let ka = (a.element.line ?? Int.max, a.element.column ?? Int.max, a.offset)
            let kb = (b.element.line ?? Int.max, b.element.column ?? Int.max, b.offset)
            return ka < kb
        }?.element
    }

    // MARK: Reading single nodes

    /// Any non-null scalar, as written.
    func string(_ node: Node, at path: String, expected: String = "a string",
                check: (String) -> String? = { _ in nil }) -> String? {
        guard case .scalar(let scalar) = node, node.tagName != .null else {
            add(.wrongType, at: node.mark, field: path, "expected \(expected), got \(describe(node))")
            return nil
        }
        if let problem = check(scalar.string) {
            add(.invalidValue, at: node.mark, field: path, problem)
            return nil
        }
        return scalar.string
    }

    func int(_ node: Node, at path: String, in range: ClosedRange<Int>,
             check: (Int) -> String? = { _ in nil }) -> Int? {
        guard node.tagName == .int, let value = node.int else {
            add(.wrongType, at: node.mark, field: path, "expected \(intNoun(range)), got \(describe(node))")
            return nil
        }
        guard range.contains(value) else {
            add(.invalidValue, at: node.mark, field: path, "expected \(rangeNoun(range)), got \(value)")
            return nil
        }
        if let problem = check(value) {
            add(.invalidValue, at: node.mark, field: path, problem)
            return nil
        }
        return value
    }

    /// A duration in seconds: an integer or a decimal number, finite, within `range`.
    func seconds(_ node: Node, at path: String, allowZero: Bool, max: Double) -> Double? {
        let noun = allowZero ? "a number of seconds (0 or more)" : "a positive number of seconds"
        let value: Double?
        switch node.tagName {
        case .int: value = node.int.map(Double.init)
        case .float: value = node.float
        default: value = nil
        }
        guard let value, value.isFinite else {
            add(.wrongType, at: node.mark, field: path, "expected \(noun), got \(describe(node))")
            return nil
        }
        guard allowZero ? value >= 0 : value > 0 else {
            add(.invalidValue, at: node.mark, field: path, "expected \(noun), got \(scalarText(node))")
            return nil
        }
        guard value <= max else {
            add(.invalidValue, at: node.mark, field: path,
                "expected at most \(formatSeconds(max)), got \(scalarText(node))")
            return nil
        }
        return value
    }

    func bool(_ node: Node, at path: String) -> Bool? {
        guard node.tagName == .bool, let value = node.bool else {
            add(.wrongType, at: node.mark, field: path, "expected true or false, got \(describe(node))")
            return nil
        }
        return value
    }

    /// One of a fixed set of words, with a did-you-mean.
    func oneOf(_ node: Node, at path: String, _ choices: [String]) -> String? {
        guard let text = string(node, at: path, expected: "one of \(choices.joined(separator: ", "))") else {
            return nil
        }
        guard choices.contains(text) else {
            var message = "expected one of \(choices.joined(separator: ", ")), got '\(text)'"
            if let guess = suggestion(for: text, among: choices) { message += " (did you mean '\(guess)'?)" }
            add(.invalidValue, at: node.mark, field: path, message)
            return nil
        }
        return text
    }

    /// The items of a sequence with their paths (`path[i]`).
    func list(_ node: Node, at path: String, expected: String) -> [(node: Node, path: String)]? {
        guard case .sequence(let seq) = node else {
            add(.wrongType, at: node.mark, field: path, "expected \(expected), got \(describe(node))")
            return nil
        }
        return seq.enumerated().map { ($0.element, "\(path)[\($0.offset)]") }
    }

    /// Reads a list whose items must be unique and (unless allowed) non-empty.
    func uniqueList<T: Hashable>(
        _ node: Node, at path: String, expected: String, allowEmpty: Bool,
        item: (Node, String) -> T?, describeItem: (T) -> String
    ) -> [T]? {
        guard let items = list(node, at: path, expected: expected) else { return nil }
        if items.isEmpty && !allowEmpty {
            add(.invalidValue, at: node.mark, field: path, "expected \(expected), got an empty list")
            return nil
        }
        var out: [T] = []
        var ok = true
        for (itemNode, itemPath) in items {
            guard let value = item(itemNode, itemPath) else { ok = false; continue }
            if out.contains(value) {
                add(.invalidValue, at: itemNode.mark, field: itemPath, "duplicate entry \(describeItem(value))")
                ok = false
                continue
            }
            out.append(value)
        }
        return ok ? out : nil
    }

    func mapping(_ node: Node, at path: String, allowed: [String], expected: String? = nil) -> MappingReader? {
        MappingReader(node, path: path, allowed: allowed, diagnostics: self, expected: expected)
    }
}

/// One YAML mapping being read: checks its keys once (unknown, duplicate, not a scalar), then
/// hands out its values by name.
struct MappingReader {
    let diagnostics: Diagnostics
    let path: String
    let mark: Mark?
    private(set) var values: [String: Node] = [:]
    private(set) var keyMarks: [String: Mark] = [:]

    init?(_ node: Node, path: String, allowed: [String], diagnostics: Diagnostics, expected: String? = nil) {
        self.diagnostics = diagnostics
        self.path = path
        self.mark = node.mark
        guard case .mapping(let mapping) = node else {
            let what = expected ?? "a mapping with keys \(allowed.joined(separator: ", "))"
            diagnostics.add(.wrongType, at: node.mark, field: path, "expected \(what), got \(describe(node))")
            return nil
        }
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let keyScalar) = keyNode else {
                diagnostics.add(.wrongType, at: keyNode.mark, field: path,
                                "expected a key name, got \(describe(keyNode))")
                continue
            }
            let key = keyScalar.string
            let field = path.isEmpty ? key : path + "." + key
            if let first = keyMarks[key] {
                diagnostics.add(.duplicateKey, at: keyNode.mark, field: field,
                                "duplicate key '\(key)' (first given at line \(first.line))")
                continue
            }
            if let m = keyNode.mark { keyMarks[key] = m }
            guard allowed.contains(key) else {
                diagnostics.add(.unknownKey, at: keyNode.mark, field: field,
                                unknownKeyMessage(key, allowed: allowed, container: path))
                continue
            }
            values[key] = valueNode
        }
    }

    func field(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    subscript(_ key: String) -> Node? { values[key] }

    func has(_ key: String) -> Bool { values[key] != nil }

    /// Records a missing required field (placed at this mapping) and returns nil.
    @discardableResult
    func missing<T>(_ key: String, _ expected: String) -> T? {
        let where_ = path.isEmpty ? "the profile" : "'\(path)'"
        diagnostics.add(.missingField, at: mark, field: field(key),
                        "missing required field '\(key)' in \(where_): expected \(expected)")
        return nil
    }

    /// Refuses keys that are allowed in general but not here (camera keys of another camera type).
    func refuse(keysOutside allowed: [String], because reason: String) -> Bool {
        var ok = true
        for key in values.keys.sorted() where !allowed.contains(key) {
            diagnostics.add(.unknownKey, at: keyMarks[key], field: field(key),
                            "'\(key)' does not apply to \(reason) (its keys: \(allowed.joined(separator: ", ")))")
            ok = false
        }
        return ok
    }

    // Convenience readers: nil when absent (no error) or wrong (error recorded).

    func string(_ key: String, expected: String = "a string", check: (String) -> String? = { _ in nil }) -> String? {
        values[key].flatMap { diagnostics.string($0, at: field(key), expected: expected, check: check) }
    }

    func requiredString(_ key: String, expected: String = "a string", check: (String) -> String? = { _ in nil }) -> String? {
        guard let node = values[key] else { return missing(key, expected) }
        return diagnostics.string(node, at: field(key), expected: expected, check: check)
    }

    func int(_ key: String, in range: ClosedRange<Int>, check: (Int) -> String? = { _ in nil }) -> Int? {
        values[key].flatMap { diagnostics.int($0, at: field(key), in: range, check: check) }
    }

    func seconds(_ key: String, allowZero: Bool = false, max: Double = 3600) -> Double? {
        values[key].flatMap { diagnostics.seconds($0, at: field(key), allowZero: allowZero, max: max) }
    }

    func bool(_ key: String) -> Bool? {
        values[key].flatMap { diagnostics.bool($0, at: field(key)) }
    }

    func oneOf(_ key: String, _ choices: [String]) -> String? {
        values[key].flatMap { diagnostics.oneOf($0, at: field(key), choices) }
    }

    func mapping(_ key: String, allowed: [String], expected: String? = nil) -> MappingReader? {
        values[key].flatMap { diagnostics.mapping($0, at: field(key), allowed: allowed, expected: expected) }
    }
}

// MARK: - Messages

/// How a node reads in a message: `'thirty'`, `"30" (a quoted string)`, `a list`, `an empty value`.
func describe(_ node: Node) -> String {
    switch node {
    case .mapping: return "a mapping"
    case .sequence: return "a list"
    case .scalar(let scalar):
        if node.tagName == .null { return scalar.string.isEmpty ? "an empty value" : "null ('\(scalar.string)')" }
        switch scalar.style {
        case .singleQuoted, .doubleQuoted: return "\"\(scalar.string)\" (a quoted string)"
        case .literal, .folded: return "a block of text"
        default: return "'\(scalar.string)'"
        }
    }
}

/// The scalar as written (for values of the right type but out of range).
func scalarText(_ node: Node) -> String {
    if case .scalar(let s) = node { return s.string }
    return describe(node)
}

func intNoun(_ range: ClosedRange<Int>) -> String {
    if range.lowerBound >= 1 { return "a positive integer" }
    if range.lowerBound == 0 { return "a non-negative integer" }
    return "an integer"
}

func rangeNoun(_ range: ClosedRange<Int>) -> String {
    if range.upperBound == Int.max { return "an integer of at least \(range.lowerBound)" }
    return "an integer from \(range.lowerBound) to \(range.upperBound)"
}

func unknownKeyMessage(_ key: String, allowed: [String], container: String) -> String {
    let where_ = container.isEmpty ? "at the top level" : "in '\(container)'"
    var message = "unknown key '\(key)' \(where_)"
    if let guess = suggestion(for: key, among: allowed) { message += "; did you mean '\(guess)'?" }
    return message + " (expected one of: \(allowed.joined(separator: ", ")))"
}

/// A close match for a misspelt word: same letters ignoring case, a known alias, or within a small
/// edit distance.
func suggestion(for word: String, among choices: [String]) -> String? {
    let aliases = ["behavior": "behaviour", "devid": "devId", "localkey": "localKey"]
    if let alias = aliases[word.lowercased()], choices.contains(alias) { return alias }
    if let same = choices.first(where: { $0.lowercased() == word.lowercased() }) { return same }
    let limit = min(3, max(2, word.count / 3))
    let scored = choices.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit, best.1 < word.count else { return nil }
    return best.0
}

/// Edit distance counting a swap of neighbours as one edit (optimal string alignment); short words only.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
            }
        }
    }
    return d[a.count][b.count]
}

extension Node {
    /// The resolved tag (`tag:yaml.org,2002:int`, ...). A plain scalar without a tag is resolved by
    /// `YAMLScalarTags` (the profile is composed with `Resolver.basic`: no regular expressions, no
    /// ICU). Never ask such a scalar's `Node.tag`: it would resolve (to str) for good.
    var tagName: Tag.Name {
        if case .scalar(let scalar) = self {
            let written = scalar.tag.description
            if written.isEmpty { return YAMLScalarTags.resolve(scalar.string) }   // implicit
            if written == "!" { return .str }                                     // non-specific
            return Tag.Name(rawValue: written)
        }
        return Tag.Name(rawValue: tag.description)
    }
}
