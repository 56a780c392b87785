import Foundation
import IPCWire
import WebRTCLink

/// The STUN/TURN servers an app's offer names in its 302 `token` list (PROTOCOL.md 4; on Tuya's
/// cloud the app and the device must use them, 9.4), which the app's own link uses too, and
/// whether the app's ICE is relay-only (every packet through a TURN server of the list).
public struct AppICEConfiguration: Sendable, Hashable {
    /// The `token` list, as it goes on the wire.
    public var servers: [IPCWire.ICEServer]
    /// webrtcbin's `ice-transport-policy` relay on the app's side: the link comes up only through
    /// an allocation on one of the TURN servers of `servers`.
    public var relayOnly: Bool

    public init(servers: [IPCWire.ICEServer] = [], relayOnly: Bool = false) {
        self.servers = servers
        self.relayOnly = relayOnly
    }

    /// True when some server is `turn:` or `turns:` (what `relayOnly` needs).
    public var hasTURNServer: Bool {
        servers.contains { $0.urls.contains { Self.scheme(of: $0).map { $0.hasPrefix("turn") } ?? false } }
    }

    /// The servers in the link's form (a missing username or credential is empty).
    var linkServers: [WebRTCLink.ICEServer] {
        servers.map { WebRTCLink.ICEServer(urls: $0.urls, username: $0.username ?? "", credential: $0.credential ?? "") }
    }

    /// Seconds a static TURN credential is said to stay valid (`ttl`) when none is given.
    public static let defaultTURNTTL: Int64 = 86400

    /// Reads one server as a person types it (`ipcemu app call --ice-server`):
    /// `stun:host[:port]`, or `turn:user:pass@host[:port][?transport=udp|tcp]` (also `turns:`, and
    /// `turn://user:pass@...`). The user and password may be percent-encoded. The result is a
    /// `token` entry: `urls` without the credentials, which go in `username` and `credential`;
    /// a STUN entry has empty credentials and `ttl` 0 (PROTOCOL.md 4's example).
    public static func server(parsing text: String, ttl: Int64 = defaultTURNTTL) throws(AppICEServerError) -> IPCWire.ICEServer {
        guard let scheme = scheme(of: text) else { throw .unknownScheme(text) }
        var rest = Substring(text.dropFirst(scheme.count + 1))
        if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[mark...])
            rest = rest[..<mark]
            guard scheme != "stun", query == "?transport=udp" || query == "?transport=tcp" else {
                throw .badQuery(text)
            }
        }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = info.firstIndex(of: ":"),
                  let u = String(info[..<colon]).removingPercentEncoding,
                  let p = String(info[info.index(after: colon)...]).removingPercentEncoding,
                  !u.isEmpty
            else { throw .badCredentials(text) }
            user = u
            password = p
        }
        let hostPort = String(rest)
        guard validHostPort(hostPort) else { throw .badAddress(text) }
        if scheme == "stun" {
            guard user == nil else { throw .credentialsOnSTUN(text) }
            return IPCWire.ICEServer(urls: ["stun:\(hostPort)"], username: "", credential: "", ttl: 0)
        }
        guard let user, let password else { throw .turnWithoutCredentials(text) }
        return IPCWire.ICEServer(urls: ["\(scheme):\(hostPort)\(query)"], username: user, credential: password, ttl: ttl)
    }

    /// `stun`, `turn` or `turns` (lower case) when `url` starts with one and a colon.
    static func scheme(of url: String) -> String? {
        let lower = url.lowercased()
        for scheme in ["stun", "turns", "turn"] where lower.hasPrefix(scheme + ":") { return scheme }
        return nil
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`, the port 1-65535.
    private static func validHostPort(_ text: String) -> Bool {
        var host = Substring(text)
        var port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return false }
                port = after.dropFirst()
            }
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return false }
            host = parts[0]
            if parts.count == 2 { port = parts[1] }
            guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }) else { return false }
        }
        guard !host.isEmpty else { return false }
        if let port {
            guard let value = Int(port), (1...65535).contains(value) else { return false }
        }
        return true
    }
}

/// Why an `--ice-server` value was refused; each names the value.
public enum AppICEServerError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownScheme(String)
    case badQuery(String)
    case badCredentials(String)
    case badAddress(String)
    case credentialsOnSTUN(String)
    case turnWithoutCredentials(String)

    public var description: String {
        switch self {
        case .unknownScheme(let s): "'\(s)': an ICE server starts with stun:, turn: or turns:"
        case .badQuery(let s): "'\(s)': only a TURN server takes a query, and only ?transport=udp or ?transport=tcp"
        case .badCredentials(let s): "'\(s)': credentials are user:password@ before the host"
        case .badAddress(let s): "'\(s)': the address must be host[:port] (port 1-65535) or [IPv6][:port]"
        case .credentialsOnSTUN(let s): "'\(s)': a STUN server takes no user:password"
        case .turnWithoutCredentials(let s): "'\(s)': a TURN server needs user:password@host"
        }
    }
}
