// The text messages of the `fmp4Stream` data channel (PROTOCOL.md 7, steps 1-3): each is a JSON
// object with exactly the string fields `type` and `msg`, written in that order.

/// One text message of the HEVC data channel.
public enum FMP4ControlMessage: Sendable, Hashable {
    /// Device -> app once the channel opens: `{"type":"codec","msg":"hevc"}`.
    case codec(String)
    /// App -> device: `{"type":"start","msg":"fmp4"}`.
    case start(String)
    /// Device -> app: `{"type":"recv","msg":""}`.
    case recv
    /// App -> device: `{"type":"complete","msg":""}`.
    case complete

    /// The data channel's label (PROTOCOL.md 7).
    public static let channelLabel = "fmp4Stream"
    /// Longest text message accepted (the four real ones are under 40 bytes).
    public static let maximumTextBytes = 1024

    public static let codecHEVC = FMP4ControlMessage.codec("hevc")
    public static let startFMP4 = FMP4ControlMessage.start("fmp4")

    public var type: String {
        switch self {
        case .codec: "codec"
        case .start: "start"
        case .recv: "recv"
        case .complete: "complete"
        }
    }

    public var msg: String {
        switch self {
        case .codec(let value), .start(let value): value
        case .recv, .complete: ""
        }
    }

    /// The exact text sent: `{"type":"...","msg":"..."}` (type first, no spaces).
    public var text: String {
        "{\"type\":\(JSONValue.string(type).jsonString),\"msg\":\(JSONValue.string(msg).jsonString)}"
    }

    /// Reads one text message. Errors name what was wrong: not JSON, a missing or non-string
    /// field, an unknown `type`, a `recv`/`complete` with a non-empty `msg`.
    public static func decode(_ text: String) throws(WireError) -> FMP4ControlMessage {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumTextBytes else {
            throw .payloadTooLarge(size: bytes.count, limit: maximumTextBytes)
        }
        let value = try JSONValue.parse(bytes)
        guard case .object = value else { throw .wrongType(field: "(fmp4Stream message)", expected: "object") }
        let reader = try JSONObjectReader(value, path: "")
        let type = try reader.string("type")
        let msg = try reader.string("msg")
        switch type {
        case "codec": return .codec(msg)
        case "start": return .start(msg)
        case "recv", "complete":
            guard msg.isEmpty else { throw .invalidValue(field: "msg", value: "\"\(msg)\"", expected: "\"\" for \(type)") }
            return type == "recv" ? .recv : .complete
        default:
            throw .invalidValue(field: "type", value: "\"\(type)\"", expected: "codec, start, recv or complete")
        }
    }
}
