/// `msg` of an answer (device -> app, PROTOCOL.md 4).
public struct SignalAnswer: Sendable, Equatable, Hashable {
    public var mode: String
    public var sdp: String

    public init(sdp: String, mode: String = webRTCMode) {
        self.mode = mode
        self.sdp = sdp
    }

    static func decode(_ r: JSONObjectReader) throws(WireError) -> SignalAnswer {
        SignalAnswer(sdp: try r.string("sdp"), mode: try r.string("mode"))
    }

    var json: JSONValue { .object(["mode": .string(mode), "sdp": .string(sdp)]) }
}

/// `msg` of a disconnect (both ways, PROTOCOL.md 4).
public struct SignalDisconnect: Sendable, Equatable, Hashable {
    public var mode: String
    /// `close_reason`.
    public var closeReason: Int64

    /// The device refuses an offer (bad `auth`, or no answered call from that user) **[ours]**.
    public static let unauthorised: Int64 = 1
    /// The device cannot open the link now (a live-view limit reached, a camera that failed) **[ours]**.
    public static let unavailable: Int64 = 2

    public init(closeReason: Int64, mode: String = webRTCMode) {
        self.mode = mode
        self.closeReason = closeReason
    }

    static func decode(_ r: JSONObjectReader) throws(WireError) -> SignalDisconnect {
        SignalDisconnect(closeReason: try r.int("close_reason"), mode: try r.string("mode"))
    }

    var json: JSONValue { .object(["mode": .string(mode), "close_reason": .int(closeReason)]) }
}
