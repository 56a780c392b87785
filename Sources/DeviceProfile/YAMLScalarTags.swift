import Yams

/// The tag of a plain, untagged YAML scalar by YAML 1.1's implicit rules, the rules of Yams'
/// default resolver (bool, int, float, merge, null, timestamp, value; otherwise str), in plain
/// Swift. The profile parser composes with `Resolver.basic` and asks this instead: Yams' rules are
/// `NSRegularExpression`s, which load ICU into every process that parses a profile (about 2.5 MB
/// of a fleet worker's resident memory: docs/fleet.md "Memory per device").
enum YAMLScalarTags {
    static func resolve(_ text: String) -> Tag.Name {
        let bytes = Array(text.utf8)
        if boolWords.contains(text) { return .bool }
        if isInt(bytes) { return .int }
        if isFloat(bytes) { return .float }
        if text == "<<" { return .merge }
        if nullWords.contains(text) { return .null }
        if isTimestamp(bytes) { return .timestamp }
        if text == "=" { return .value }
        return .str
    }

    private static let boolWords: Set<String> = [
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF",
    ]
    private static let nullWords: Set<String> = ["~", "null", "Null", "NULL", ""]

    /// `[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ |
    /// [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`
    static func isInt(_ bytes: [UInt8]) -> Bool {
        var s = Cursor(bytes)
        s.sign()
        let start = s
        if s.take("0"), s.take("b"), s.many(binary) > 0, s.atEnd { return true }
        s = start
        if s.take("0") {
            _ = s.take("o")
            if s.many(octal) > 0, s.atEnd { return true }
        }
        s = start
        if s.take("0"), s.atEnd { return true }
        s = start
        if s.take(nonZeroDigit), s.many(digitOrUnderscore) >= 0, s.atEnd { return true }
        s = start
        if s.take("0"), s.take("x"), s.many(hex) > 0, s.atEnd { return true }
        s = start
        if s.take(nonZeroDigit) {
            _ = s.many(digitOrUnderscore)
            if s.sexagesimalGroups(), s.atEnd { return true }
        }
        return false
    }

    /// `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)? |
    /// [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)`
    static func isFloat(_ bytes: [UInt8]) -> Bool {
        var s = Cursor(bytes)
        s.sign()
        let signed = s
        if s.take(digit) {
            _ = s.many(digitOrUnderscore)
            let integer = s
            if s.take(".") { _ = s.many(digitOrUnderscore) }
            if s.exponent(signRequired: false), s.atEnd { return true }
            s = integer
            if s.sexagesimalGroups(), s.take("."), s.many(digitOrUnderscore) >= 0, s.atEnd { return true }
        }
        s = Cursor(bytes)
        if s.take("."), s.many(digitOrUnderscore) > 0, s.exponent(signRequired: true), s.atEnd { return true }
        s = signed
        if s.take("."), s.word(["inf", "Inf", "INF"]), s.atEnd { return true }
        s = Cursor(bytes)
        if s.take("."), s.word(["nan", "NaN", "NAN"]), s.atEnd { return true }
        return false
    }

    /// `[0-9]{4}-[0-9]{2}-[0-9]{2} | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}
    /// (\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?`
    static func isTimestamp(_ bytes: [UInt8]) -> Bool {
        var s = Cursor(bytes)
        guard s.digits(4...4), s.take("-") else { return false }
        let afterYear = s
        if s.digits(2...2), s.take("-"), s.digits(2...2), s.atEnd { return true }
        s = afterYear
        guard s.digits(1...2), s.take("-"), s.digits(1...2) else { return false }
        if !s.take("T"), !s.take("t") {
            guard s.many(blank) > 0 else { return false }
        }
        guard s.digits(1...2), s.take(":"), s.digits(2...2), s.take(":"), s.digits(2...2) else { return false }
        if s.take(".") { _ = s.many(digit) }
        if s.atEnd { return true }
        _ = s.many(blank)
        if s.take("Z") { return s.atEnd }
        guard s.take("-") || s.take("+"), s.digits(1...2) else { return false }
        if s.take(":") { guard s.digits(2...2) else { return false } }
        return s.atEnd
    }

    private static func digit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    private static func nonZeroDigit(_ b: UInt8) -> Bool { b >= 0x31 && b <= 0x39 }
    private static func digitOrUnderscore(_ b: UInt8) -> Bool { digit(b) || b == 0x5F }
    private static func binary(_ b: UInt8) -> Bool { b == 0x30 || b == 0x31 || b == 0x5F }
    private static func octal(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x37) || b == 0x5F }
    private static func hex(_ b: UInt8) -> Bool {
        digit(b) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46) || b == 0x5F
    }
    private static func blank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    /// A position in the scalar's bytes; each step moves it only when it matches.
    private struct Cursor {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(character.value) else { return false }
            index += 1
            return true
        }

        mutating func take(_ matches: (UInt8) -> Bool) -> Bool {
            guard index < bytes.count, matches(bytes[index]) else { return false }
            index += 1
            return true
        }

        /// As many as match; how many.
        mutating func many(_ matches: (UInt8) -> Bool) -> Int {
            let start = index
            while index < bytes.count, matches(bytes[index]) { index += 1 }
            return index - start
        }

        mutating func sign() { if !take("-") { _ = take("+") } }

        /// Decimal digits, as many as `count` allows (greedy), at least its lower bound.
        mutating func digits(_ count: ClosedRange<Int>) -> Bool {
            let start = index
            while index < bytes.count, index - start < count.upperBound, YAMLScalarTags.digit(bytes[index]) { index += 1 }
            if count.contains(index - start) { return true }
            index = start
            return false
        }

        /// `([eE][-+]?[0-9]+)?` (sign required when `signRequired`): false only for a broken exponent.
        mutating func exponent(signRequired: Bool) -> Bool {
            guard take("e") || take("E") else { return true }
            let signed = take("-") || take("+")
            if signRequired && !signed { return false }
            return many(YAMLScalarTags.digit) > 0
        }

        /// `(:[0-5]?[0-9])+`
        mutating func sexagesimalGroups() -> Bool {
            var groups = 0
            while take(":") {
                let start = index
                let run = many(YAMLScalarTags.digit)
                guard run == 1 || (run == 2 && bytes[start] <= 0x35) else { return false }
                groups += 1
            }
            return groups > 0
        }

        mutating func word(_ choices: [String]) -> Bool {
            for choice in choices {
                let utf8 = Array(choice.utf8)
                if bytes.count - index >= utf8.count, Array(bytes[index..<(index + utf8.count)]) == utf8 {
                    index += utf8.count
                    return true
                }
            }
            return false
        }
    }
}
