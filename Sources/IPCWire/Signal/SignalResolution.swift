/// `msg` of a resolution message (app -> device, PROTOCOL.md 4): switch a link that is up between
/// the main (0) and the sub (1) stream. No reply.
public struct SignalResolution: Sendable, Equatable, Hashable {
    public var mode: String
    /// The `stream_type` to switch to, as it came: any integer decodes, and the device logs and
    /// drops a value its profile has no stream for (`streamType` is nil then).
    public var value: Int64

    public init(value: Int64, mode: String = webRTCMode) {
        self.mode = mode
        self.value = value
    }

    public init(streamType: StreamType, mode: String = webRTCMode) {
        self.init(value: Int64(streamType.rawValue), mode: mode)
    }

    /// The stream asked for, or nil for a value that is neither 0 nor 1.
    public var streamType: StreamType? {
        guard value >= 0, value <= 1 else { return nil }
        return StreamType(rawValue: Int(value))
    }

    static func decode(_ r: JSONObjectReader) throws(WireError) -> SignalResolution {
        SignalResolution(value: try r.int("value"), mode: try r.string("mode"))
    }

    var json: JSONValue { .object(["mode": .string(mode), "value": .int(value)]) }
}
