// ICE server URLs (the 302 offer's `token` list, W3C form) in the form webrtcbin takes.
import Foundation

enum ICEURL {
    /// `stun:host[:port]` -> `stun://host:port` (webrtcbin's form).
    static func stunServer(_ url: String) -> String? {
        guard url.lowercased().hasPrefix("stun:") else { return nil }
        let rest = url.dropFirst(5).drop { $0 == "/" }
        guard !rest.isEmpty else { return nil }
        let hostPort = rest.split(separator: "?").first.map(String.init) ?? String(rest)
        return "stun://" + withDefaultPort(hostPort, 3478)
    }

    /// `turn:host[:port][?transport=x]` / `turns:...` with credentials -> `turn(s)://user:pass@host:port[?transport=x]`.
    static func turnServer(_ url: String, username: String, credential: String) -> String? {
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("turns:") {
            scheme = "turns"
        } else if lower.hasPrefix("turn:") {
            scheme = "turn"
        } else {
            return nil
        }
        let rest = url.dropFirst(scheme.count + 1).drop { $0 == "/" }
        let parts = rest.split(separator: "?", maxSplits: 1)
        guard let hostPort = parts.first, !hostPort.isEmpty else { return nil }
        let query = parts.count > 1 ? "?" + parts[1] : ""
        let user = escape(username)
        let pass = escape(credential)
        return "\(scheme)://\(user):\(pass)@\(withDefaultPort(String(hostPort), scheme == "turns" ? 5349 : 3478))\(query)"
    }

    private static func withDefaultPort(_ hostPort: String, _ port: Int) -> String {
        if hostPort.hasPrefix("[") { return hostPort.contains("]:") ? hostPort : "\(hostPort):\(port)" }
        return hostPort.contains(":") ? hostPort : "\(hostPort):\(port)"
    }

    private static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
