/// A parsed broker URL: `mqtt://` / `tcp://` (plain, port 1883 by default), `mqtts://` / `ssl://`
/// (TLS, 8883), or `unix:///path/to.sock`, a Unix domain socket (the spelling paho and curl use:
/// the scheme, then the absolute path). A Unix socket endpoint has `host` = the path and
/// `port` 0, which is how libmosquitto's `mosquitto_connect` is told to use one; it has no
/// credentials in the URL and no TLS (docs/fleet.md "Devices over Unix sockets").
public struct MQTTBrokerEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var usesTLS: Bool
    public var username: String?
    public var password: String?

    /// `unix://`: what a Unix socket URL starts with (then the absolute path).
    public static let unixScheme = "unix://"

    /// The longest socket path a Unix socket address holds: `sun_path` is 108 bytes on Linux,
    /// one of them the terminating NUL (libmosquitto refuses longer paths the same way).
    public static let maximumUnixPathBytes = 107

    /// The socket's path for a Unix socket endpoint, else nil.
    public var unixSocketPath: String? { port == 0 ? host : nil }

    /// The URL of the Unix socket at `path` (not checked: see `init(url:)`).
    public static func unixURL(path: String) -> String { unixScheme + path }

    public init(url: String) throws(MQTTError) {
        if url.hasPrefix(Self.unixScheme) {
            self.host = try Self.unixPath(of: url)
            self.port = 0
            self.usesTLS = false
            return
        }
        let schemes: [(String, Bool, Int)] = [
            ("mqtt://", false, 1883), ("tcp://", false, 1883), ("mqtts://", true, 8883),
            ("ssl://", true, 8883),
        ]
        guard let (prefix, tls, defaultPort) = schemes.first(where: { url.hasPrefix($0.0) }) else {
            throw .invalidOptions("broker URL must start with mqtt://, mqtts:// or unix://: \(url)")
        }
        var rest = Substring(url.dropFirst(prefix.count))
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var user: String?
        var pass: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = String(credentials[..<colon])
                pass = String(credentials[credentials.index(after: colon)...])
            } else {
                user = String(credentials)
            }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {  // [IPv6]:port
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalidOptions("broker URL has an unterminated IPv6 address: \(url)")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw .invalidOptions("broker URL has no host: \(url)") }
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw .invalidOptions("broker URL has an invalid port: \(url)")
            }
            port = value
        }
        self.host = String(host)
        self.port = port
        self.usesTLS = tls
        self.username = user
        self.password = pass
    }

    /// The socket path of a `unix://` URL: absolute, not empty, at most `maximumUnixPathBytes`
    /// bytes, no NUL byte. Each refusal names the URL and what is wrong with it.
    private static func unixPath(of url: String) throws(MQTTError) -> String {
        let path = String(url.dropFirst(unixScheme.count))
        guard !path.isEmpty else {
            throw .invalidOptions("broker URL has no socket path (unix:///path/to.sock): \(url)")
        }
        guard path.hasPrefix("/") else {
            throw .invalidOptions("a unix:// broker URL takes an absolute socket path, as in unix:///run/mqtt.sock: \(url)")
        }
        guard !path.utf8.contains(0) else {
            throw .invalidOptions("broker URL's socket path holds a NUL byte: \(url)")
        }
        let bytes = path.utf8.count
        guard bytes <= maximumUnixPathBytes else {
            throw .invalidOptions(
                "broker URL's socket path is \(bytes) bytes, longer than the \(maximumUnixPathBytes) a Unix socket address holds: \(path)")
        }
        return path
    }
}
