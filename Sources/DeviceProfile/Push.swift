import Foundation

// The profile's `push` section (PROTOCOL.md 8.8): where a press is pushed when no cloud does it.

extension DeviceProfile {
    /// Pushes of a press (PROTOCOL.md 8.8). Both absent (the default): no pushes.
    public struct Push: Sendable, Equatable {
        /// POST one JSON object per household user to this `http://` or `https://` URL.
        public var url: String?
        /// Also write one `<msgid>-<uid>.apns` file per user into this folder (absolute path).
        public var apnsDir: String?

        public init(url: String? = nil, apnsDir: String? = nil) {
            self.url = url
            self.apnsDir = apnsDir
        }

        /// True when a press is pushed anywhere.
        public var isEnabled: Bool { url != nil || apnsDir != nil }
    }
}

// MARK: - Parsing

extension ProfileParser {
    func push(_ top: MappingReader) -> Profile.Push? {
        guard let node = top["push"] else { return Profile.Push() }
        guard let m = diagnostics.mapping(node, at: "push", allowed: ["url", "apnsDir"]) else { return nil }
        let url = m.string("url", expected: "an http:// or https:// url", check: Self.pushURLProblem)
        let apnsDir = m.string("apnsDir", expected: "a folder path") { text in
            text.isEmpty ? "expected a folder path, got an empty string" : nil
        }
        if (m.has("url") && url == nil) || (m.has("apnsDir") && apnsDir == nil) { return nil }
        return Profile.Push(url: url, apnsDir: apnsDir.map(resolve))
    }

    static func pushURLProblem(_ text: String) -> String? {
        let expected = "expected an http:// or https:// url with a host"
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme)
        else { return "\(expected), got '\(text)'" }
        guard let host = components.host, !host.isEmpty else { return "\(expected), got '\(text)' (no host)" }
        return nil
    }
}
