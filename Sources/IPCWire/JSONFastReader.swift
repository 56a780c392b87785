/// A small JSON reader for the shape every message on the wire has (issue 23: Foundation's
/// `JSONDecoder` through `Codable` was half of the simulator's time): an object of ASCII strings
/// with the simple escapes, integers of at most 18 digits, `true`, `false`, `null`, arrays and
/// nested objects, no key twice.
///
/// It answers only where its answer is certainly the one `JSONDecoder` gives: on anything else
/// (other escapes, non-ASCII bytes, fractions and exponents, long or signed-zero numbers, leading
/// zeros, a repeated key, deep nesting, a top level that is not an object, any error) it returns
/// nil and `JSONValue.parse` asks `JSONDecoder`, so what is accepted, what is refused and every
/// error message are the same as before (the IPCWire tests compare both on a corpus).
struct JSONFastReader {
    /// Deeper documents go to `JSONDecoder` (which has its own limit and error).
    static let maxDepth = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The document, or nil when the fast path does not answer for it.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var reader = JSONFastReader(bytes)
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{"), let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? value : nil
    }

    @inline(__always)
    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard let byte = peek() else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map { .string($0) }
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return nil
        }
    }

    private mutating func object(depth: Int) -> JSONValue? {
        guard depth <= Self.maxDepth else { return nil }
        index += 1  // {
        var fields: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            guard let member = value(depth: depth) else { return nil }
            // A repeated key: JSONDecoder's own rule decides.
            guard fields.updateValue(member, forKey: key) == nil else { return nil }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(fields)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        guard depth <= Self.maxDepth else { return nil }
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            guard let item = value(depth: depth) else { return nil }
            items.append(item)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            default: return nil
            }
        }
    }

    /// A string of printable ASCII with the simple escapes (`\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`).
    private mutating func string() -> String? {
        index += 1  // "
        let start = index
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = index
                index += 1
                return escaped ? unescape(start, end) : String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            guard byte >= 0x20, byte < 0x80 else { return nil }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 1
                guard index < bytes.count, Self.unescaped(bytes[index]) != nil else { return nil }
            }
            index += 1
        }
        return nil
    }

    /// The escapes of `start..<end` (already checked) resolved.
    private mutating func unescape(_ start: Int, _ end: Int) -> String {
        scratch.removeAll(keepingCapacity: true)
        var i = start
        while i < end {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\\"), i + 1 < end, let plain = Self.unescaped(bytes[i + 1]) {
                scratch.append(plain)
                i += 2
            } else {
                scratch.append(byte)
                i += 1
            }
        }
        return String(decoding: scratch, as: UTF8.self)
    }

    @inline(__always)
    private static func unescaped(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    private mutating func literal(_ word: StaticString, _ result: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        let text = word.utf8Start
        for k in 0..<count where bytes[index + k] != text[k] { return nil }
        index += count
        return result
    }

    /// `-?[1-9][0-9]{0,17}` or `0`, ending at a delimiter: always an exact Int64.
    private mutating func integer() -> JSONValue? {
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var magnitude: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            guard index - start < 18 else { return nil }
            magnitude = magnitude * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits > 0 else { return nil }
        // Leading zeros and -0 are JSONDecoder's to judge.
        if bytes[start] == UInt8(ascii: "0"), digits > 1 || negative { return nil }
        if let next = peek() {
            switch next {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: break
            default: return nil  // a fraction, an exponent, or garbage
            }
        }
        return .int(negative ? -magnitude : magnitude)
    }
}
