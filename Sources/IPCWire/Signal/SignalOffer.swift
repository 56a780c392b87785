/// One ICE server of an offer's `token` list (PROTOCOL.md 4).
public struct ICEServer: Sendable, Equatable, Hashable {
    /// `urls`: one string on the wire, or an array of strings.
    public var urls: [String]
    public var username: String?
    public var credential: String?
    /// Seconds the credential stays valid.
    public var ttl: Int64?

    public init(urls: [String], username: String? = nil, credential: String? = nil, ttl: Int64? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
        self.ttl = ttl
    }

    static func decode(_ value: JSONValue, path: String) throws(WireError) -> ICEServer {
        let r = try JSONObjectReader(value, path: path)
        var urls: [String]
        switch r.fields["urls"] {
        case nil, .null?: throw .missingField(r.fieldPath("urls"))
        case .string(let s)?: urls = [s]
        case .array(let items)?:
            urls = []
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item else {
                    throw .wrongType(field: r.fieldPath("urls") + "[\(i)]", expected: "string")
                }
                urls.append(s)
            }
        default: throw .wrongType(field: r.fieldPath("urls"), expected: "string or array of strings")
        }
        return ICEServer(urls: urls, username: try r.optionalString("username"),
                         credential: try r.optionalString("credential"), ttl: try r.optionalInt("ttl"))
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "urls": urls.count == 1 ? .string(urls[0]) : .array(urls.map { .string($0) }),
        ]
        if let username { o["username"] = .string(username) }
        if let credential { o["credential"] = .string(credential) }
        if let ttl { o["ttl"] = .int(ttl) }
        return .object(o)
    }
}

/// `msg` of an offer (app -> device, PROTOCOL.md 4).
public struct SignalOffer: Sendable, Equatable, Hashable {
    public var mode: String
    public var sdp: String
    /// `stream_type`: which stream the app wants.
    public var streamType: StreamType
    /// HMAC proof of the shared secrets (`P2PAuth`).
    public var auth: String
    /// `token`: ICE servers; an absent list reads as empty.
    public var iceServers: [ICEServer]

    public init(sdp: String, streamType: StreamType = .main, auth: String, iceServers: [ICEServer] = [],
                mode: String = webRTCMode) {
        self.mode = mode
        self.sdp = sdp
        self.streamType = streamType
        self.auth = auth
        self.iceServers = iceServers
    }

    static func decode(_ r: JSONObjectReader) throws(WireError) -> SignalOffer {
        var servers: [ICEServer] = []
        if r.has("token") {
            for (i, item) in try r.array("token").enumerated() {
                servers.append(try ICEServer.decode(item, path: r.fieldPath("token") + "[\(i)]"))
            }
        }
        return SignalOffer(sdp: try r.string("sdp"), streamType: try StreamType(reading: r, key: "stream_type"),
                           auth: try r.string("auth"), iceServers: servers, mode: try r.string("mode"))
    }

    var json: JSONValue {
        .object([
            "mode": .string(mode), "sdp": .string(sdp), "stream_type": .int(Int64(streamType.rawValue)),
            "auth": .string(auth), "token": .array(iceServers.map(\.json)),
        ])
    }
}

/// The `mode` every 302 body carries.
public let webRTCMode = "webrtc"
