import Foundation

/// A JSON document as a plain value. Wire types decode from it with path-aware errors
/// (`WireError`), so a bad field is named by its path (`data.data.sessionId`), never defaulted.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// Parses UTF-8 JSON text. Refuses anything that is not one complete JSON value.
    /// The common shape of a wire message is read by `JSONFastReader`; everything else (and every
    /// error) by `JSONDecoder`, with the same result either way.
    public static func parse(_ bytes: some Collection<UInt8>) throws(WireError) -> JSONValue {
        let fast: JSONValue?
        if let contiguous = bytes.withContiguousStorageIfAvailable({ JSONFastReader.read($0) }) {
            fast = contiguous
        } else {
            fast = Array(bytes).withUnsafeBufferPointer { JSONFastReader.read($0) }
        }
        if let fast { return fast }
        return try parseWithFoundation(bytes)
    }

    /// The reference reader: `JSONDecoder` through `Codable`.
    static func parseWithFoundation(_ bytes: some Collection<UInt8>) throws(WireError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch let error as DecodingError {
            switch error {
            case .dataCorrupted(let context):
                throw .malformedJSON(context.underlyingError.map { String(describing: $0) } ?? context.debugDescription)
            default:
                throw .malformedJSON(String(describing: error))
            }
        } catch {
            throw .malformedJSON(String(describing: error))
        }
    }

    /// Serialises to compact JSON with sorted keys (stable output for tests and signatures).
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    public var jsonString: String { String(decoding: serialized(), as: UTF8.self) }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded(), abs(d) < 1e15 { out.append(contentsOf: String(Int64(d)).utf8) }
                else { out.append(contentsOf: "\(d)".utf8) }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            for (i, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string: `"` `\\` and the control characters escaped, everything else as its UTF-8
    /// bytes (byte by byte: a String's UTF-8 is always valid, and no byte of a multi-byte sequence
    /// is below 0x80).
    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(byte >> 4 == 0 ? UInt8(ascii: "0") : UInt8(ascii: "1"))
                let low = byte & 0x0F
                out.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        // Each attempt succeeds only on its own kind of token (an integer is tried before a double),
        // so the order changes nothing but the cost: a failed attempt builds an error with its
        // coding path, and strings and objects, the commonest values on the wire, come first
        // (issue 23: the simulator spent most of its time in failed attempts here).
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let o = try? c.decode([String: JSONValue].self) { self = .object(o) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else { self = .array(try c.decode([JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

// MARK: - Typed, path-aware field access

/// Read access to one JSON object with the path it sits at, so every error names its field.
public struct JSONObjectReader: Sendable {
    public let fields: [String: JSONValue]
    public let path: String

    public init(_ value: JSONValue, path: String) throws(WireError) {
        guard case .object(let o) = value else { throw .wrongType(field: path, expected: "object") }
        self.fields = o
        self.path = path
    }

    public func fieldPath(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    public func has(_ key: String) -> Bool {
        if let v = fields[key], v != .null { return true }
        return false
    }

    public func string(_ key: String) throws(WireError) -> String {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        guard case .string(let s) = v else { throw .wrongType(field: fieldPath(key), expected: "string") }
        return s
    }

    public func optionalString(_ key: String) throws(WireError) -> String? {
        guard has(key) else { return nil }
        return try string(key)
    }

    public func int(_ key: String) throws(WireError) -> Int64 {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        switch v {
        case .int(let i): return i
        case .double(let d):
            if let i = Int64(exactly: d) { return i }
            throw .wrongType(field: fieldPath(key), expected: "integer")
        default: throw .wrongType(field: fieldPath(key), expected: "integer")
        }
    }

    public func optionalInt(_ key: String) throws(WireError) -> Int64? {
        guard has(key) else { return nil }
        return try int(key)
    }

    /// An integer where an integral number beyond the Int64 range (JSON allows any) saturates to
    /// `Int64.min`/`Int64.max` instead of being refused; a fraction is still the wrong type.
    /// For values that are range-checked next (deadlines, clocks: PROTOCOL.md 3.4).
    public func saturatingInt(_ key: String) throws(WireError) -> Int64 {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        switch v {
        case .int(let i): return i
        case .double(let d) where d == d.rounded(): return Self.saturating(d)
        default: throw .wrongType(field: fieldPath(key), expected: "integer")
        }
    }

    public func optionalSaturatingInt(_ key: String) throws(WireError) -> Int64? {
        guard has(key) else { return nil }
        return try saturatingInt(key)
    }

    /// An integral double as Int64, saturating at the ends (never traps; NaN reads as 0).
    public static func saturating(_ d: Double) -> Int64 {
        if d.isNaN { return 0 }
        if d >= 9_223_372_036_854_775_807.0 { return .max }
        if d <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(d)
    }

    public func bool(_ key: String) throws(WireError) -> Bool {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        guard case .bool(let b) = v else { throw .wrongType(field: fieldPath(key), expected: "boolean") }
        return b
    }

    public func optionalBool(_ key: String) throws(WireError) -> Bool? {
        guard has(key) else { return nil }
        return try bool(key)
    }

    public func object(_ key: String) throws(WireError) -> JSONObjectReader {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        return try JSONObjectReader(v, path: fieldPath(key))
    }

    public func optionalObject(_ key: String) throws(WireError) -> JSONObjectReader? {
        guard has(key) else { return nil }
        return try object(key)
    }

    public func array(_ key: String) throws(WireError) -> [JSONValue] {
        guard let v = fields[key], v != .null else { throw .missingField(fieldPath(key)) }
        guard case .array(let a) = v else { throw .wrongType(field: fieldPath(key), expected: "array") }
        return a
    }
}
