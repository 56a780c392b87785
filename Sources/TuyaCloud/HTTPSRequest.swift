/// One HTTP header, in the order the SDK sends them.
public struct HTTPHeader: Sendable, Equatable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An HTTPS POST the join machine asks the runner to make (`CloudJoinEffect.httpsRequest`). The
/// runner answers with `CloudJoinInput.httpsAnswered(id:status:body:)` or `.httpsFailed(id:why:)`,
/// and must give up after `timeoutMs` (the SDK's `HTTP_TIMEOUT_MS_DEFAULT`, 5 s) and after reading
/// more than `answerLimit` bytes (it may answer with what it read: the machine refuses it).
public struct HTTPSRequest: Sendable, Equatable {
    /// What the request is for; the runner needs it only for its logs.
    public enum Purpose: String, Sendable, Equatable, Codable {
        case resolveEndpoints, activate, updateVersions, updateSkill, syncInfo
    }

    public var id: UInt64
    public var purpose: Purpose
    public var method: String = "POST"
    public var host: String
    public var port: Int
    /// Path with its query (`/d.json?a=...&sign=...`).
    public var pathAndQuery: String
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    /// The CA (DER) the TLS connection must be pinned to; nil = the runner's default trust.
    public var caDER: [UInt8]?
    public var timeoutMs: Int64 = 5_000
    public var answerLimit: Int

    public init(id: UInt64, purpose: Purpose, host: String, port: Int, pathAndQuery: String, headers: [HTTPHeader],
                body: [UInt8], caDER: [UInt8]?, answerLimit: Int) {
        self.id = id
        self.purpose = purpose
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
        self.headers = headers
        self.body = body
        self.caDER = caDER
        self.answerLimit = answerLimit
    }

    /// `https://host[:port]/path?query`.
    public var url: String {
        "https://" + host + (port == 443 ? "" : ":\(port)") + pathAndQuery
    }
}
