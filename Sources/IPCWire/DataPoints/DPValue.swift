/// A data point's value on the wire (PROTOCOL.md 8.3): a DP is a bool, an integer, or a string
/// (enum DPs carry their member as a string, "raw" DPs base64 text). Keys of `dps` objects are DP
/// ids as decimal strings; values are one of these three JSON kinds.
public enum DPValue: Sendable, Equatable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case string(String)

    /// The JSON kind it travels as.
    public var json: JSONValue {
        switch self {
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    /// Reads a JSON value; nil when it is none of the three kinds (an object, an array, null, a
    /// fractional number): the caller refuses it and names the DP.
    public init?(json: JSONValue) {
        switch json {
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }

    /// The JSON kind's name, for refusal messages ("bool", "integer", "string").
    public var kindName: String {
        switch self {
        case .bool: "bool"
        case .int: "integer"
        case .string: "string"
        }
    }

    public var description: String { json.jsonString }
}

/// A DP id: 1-255 in Tuya's products (PROTOCOL.md 8.3 lists 115-212).
public typealias DPId = Int
