import Foundation
import IPCWire

/// Who may write a data point (PROTOCOL.md 8.3 `access`).
public enum DPAccess: String, Sendable, Equatable, Hashable {
    /// Only the device changes it; an app's write is refused and the value reported back.
    case readOnly = "ro"
    /// An app may set it with protocol 5.
    case readWrite = "rw"
}

/// A data point's type (PROTOCOL.md 8.3 `type`) and what values it takes.
public enum DPType: Sendable, Equatable, Hashable, CustomStringConvertible {
    case bool
    /// An integer within the range.
    case int(ClosedRange<Int64>)
    /// Free text of at most `maxLength` UTF-8 bytes.
    case string(maxLength: Int)
    /// One of these strings (`"0"` battery, `"1"` adapter, ...).
    case enumeration([String])
    /// Base64 of a JSON object (snapshot references, alerts), or `""` for none yet.
    case raw

    /// The longest text a string or raw DP holds (a DP travels in an MQTT message of at most 64 KiB).
    public static let maxTextBytes = 16 * 1024

    public var description: String {
        switch self {
        case .bool: "bool"
        case .int(let r): "int \(r.lowerBound)-\(r.upperBound)"
        case .string: "string"
        case .enumeration(let members): "enum \(members.map { "\"\($0)\"" }.joined(separator: ", "))"
        case .raw: "string (base64 JSON)"
        }
    }

    /// Why `value` does not fit this type; nil when it does.
    public func problem(with value: DPValue) -> DPValueProblem? {
        switch (self, value) {
        case (.bool, .bool):
            return nil
        case (.int(let range), .int(let i)):
            return range.contains(i) ? nil : .outOfRange(i, range)
        case (.string(let maxLength), .string(let s)):
            return s.utf8.count <= maxLength ? nil : .tooLong(bytes: s.utf8.count, max: maxLength)
        case (.enumeration(let members), .string(let s)):
            return members.contains(s) ? nil : .notAMember(s, members)
        case (.raw, .string(let s)):
            if s.isEmpty { return nil }
            if s.utf8.count > Self.maxTextBytes { return .tooLong(bytes: s.utf8.count, max: Self.maxTextBytes) }
            guard let data = Data(base64Encoded: s), let json = try? JSONValue.parse(data), case .object = json else {
                return .notBase64JSON
            }
            return nil
        default:
            return .wrongType(expected: expectedKind, got: value.kindName)
        }
    }

    /// The JSON kind a value of this type travels as (for refusal messages).
    public var expectedKind: String {
        switch self {
        case .bool: "bool"
        case .int: "integer"
        case .string, .enumeration, .raw: "string"
        }
    }
}

/// Why a value does not fit a DP's type.
public enum DPValueProblem: Sendable, Equatable, Hashable, CustomStringConvertible {
    case wrongType(expected: String, got: String)
    case outOfRange(Int64, ClosedRange<Int64>)
    case notAMember(String, [String])
    case tooLong(bytes: Int, max: Int)
    case notBase64JSON

    public var description: String {
        switch self {
        case .wrongType(let expected, let got): "expected a \(expected), got a \(got)"
        case .outOfRange(let v, let r): "expected \(r.lowerBound) to \(r.upperBound), got \(v)"
        case .notAMember(let v, let members):
            "expected one of \(members.map { "\"\($0)\"" }.joined(separator: ", ")), got \"\(v)\""
        case .tooLong(let bytes, let max): "expected at most \(max) bytes, got \(bytes)"
        case .notBase64JSON: "expected base64 of a JSON object (or an empty string)"
        }
    }
}

/// One data point of a product (PROTOCOL.md 8.3's table): id, code, type, access and the value it
/// starts with.
public struct DPDefinition: Sendable, Equatable, Hashable {
    public var id: DPId
    /// The Tuya DP code (`wireless_awake`, ...).
    public var code: String
    public var type: DPType
    public var access: DPAccess
    /// The value a device starts with unless its profile says otherwise (`DataPointStore.init`).
    public var defaultValue: DPValue

    public init(id: DPId, code: String, type: DPType, access: DPAccess, defaultValue: DPValue) {
        self.id = id
        self.code = code
        self.type = type
        self.access = access
        self.defaultValue = defaultValue
    }

    /// `149 wireless_awake`, for messages.
    public var name: String { "\(id) \(code)" }
}
