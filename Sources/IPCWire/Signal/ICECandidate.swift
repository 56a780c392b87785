/// `msg` of a candidate (both ways, PROTOCOL.md 4). The line is kept bare (`candidate:...`):
/// a received `a=` prefix and trailing CRLF are removed, and it is sent as `a=candidate:...\r\n`.
/// An empty line means end of candidates.
public struct ICECandidate: Sendable, Equatable, Hashable {
    public var mode: String
    /// The bare `candidate:...` attribute value, or "" for end of candidates.
    public private(set) var candidate: String
    /// Absent means the first m-line (every medium shares one transport: max-bundle, rtcp-mux).
    public var sdpMLineIndex: Int?
    public var sdpMid: String?

    /// `candidate` may carry the `a=` prefix and CRLF; it is normalised.
    public init(candidate: String, sdpMLineIndex: Int? = nil, sdpMid: String? = nil, mode: String = webRTCMode) {
        self.mode = mode
        self.candidate = Self.bareLine(candidate)
        self.sdpMLineIndex = sdpMLineIndex
        self.sdpMid = sdpMid
    }

    /// The end-of-candidates marker (an empty line).
    public static func endOfCandidates(mode: String = webRTCMode) -> ICECandidate {
        ICECandidate(candidate: "", mode: mode)
    }

    public var isEndOfCandidates: Bool { candidate.isEmpty }

    /// The m-line index to give the ICE agent (0 when absent).
    public var effectiveMLineIndex: Int { sdpMLineIndex ?? 0 }

    /// The line as sent: `a=candidate:...\r\n`, or "" for end of candidates.
    public var wireLine: String { candidate.isEmpty ? "" : "a=" + candidate + "\r\n" }

    /// Strips surrounding blanks and CR/LF and an `a=` prefix; `end-of-candidates` becomes "".
    static func bareLine(_ raw: String) -> String {
        var s = Substring(raw)
        while let c = s.last, c.isWhitespace || c.isNewline { s = s.dropLast() }
        while let c = s.first, c.isWhitespace || c.isNewline { s = s.dropFirst() }
        if s.hasPrefix("a=") { s = s.dropFirst(2) }
        if s == "end-of-candidates" { return "" }
        return String(s)
    }

    static func decode(_ r: JSONObjectReader) throws(WireError) -> ICECandidate {
        let raw = try r.string("candidate")
        let bare = bareLine(raw)
        guard bare.isEmpty || bare.hasPrefix("candidate:") else {
            throw .invalidValue(field: r.fieldPath("candidate"), value: "'\(raw.prefix(40))'",
                                expected: "'candidate:...' (with or without 'a=' and CRLF) or empty")
        }
        var index: Int?
        if let raw = try r.optionalInt("sdpMLineIndex") {
            guard raw >= 0, raw <= Int64(Int32.max) else {
                throw .invalidValue(field: r.fieldPath("sdpMLineIndex"), value: String(raw), expected: "a non-negative index")
            }
            index = Int(raw)
        }
        return ICECandidate(candidate: bare, sdpMLineIndex: index, sdpMid: try r.optionalString("sdpMid"),
                            mode: try r.string("mode"))
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["mode": .string(mode), "candidate": .string(wireLine)]
        if let sdpMLineIndex { o["sdpMLineIndex"] = .int(Int64(sdpMLineIndex)) }
        if let sdpMid { o["sdpMid"] = .string(sdpMid) }
        return .object(o)
    }
}
