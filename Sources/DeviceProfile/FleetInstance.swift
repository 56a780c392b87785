/// Fleet support: one profile, many devices. A profile whose `devId` holds `{index}` (or `{index:N}`,
/// the index zero-padded to N digits) is a template; `instance(index:)` makes device number `index`.
/// `withDevId(_:)` gives any profile another device id.
extension DeviceProfile {
    /// True when `identity.devId` holds an `{index}` placeholder.
    public var isTemplate: Bool { DevIdTemplate.hasPlaceholder(identity.devId) }

    /// Device number `index` of a template profile: `{index}` filled in, in `devId` and `name`
    /// (a name that was the devId follows it). A profile that is not a template gets `-<index>`
    /// appended to its devId, so ids stay distinct.
    public func instance(index: Int) throws(ProfileError) -> DeviceProfile {
        guard index >= 0 else {
            throw fleetError("expected a device index of 0 or more, got \(index)")
        }
        let template = identity.devId
        let devId = isTemplate
            ? DevIdTemplate.expand(template, index: index)
            : "\(template)-\(index)"
        var copy = try withDevId(devId)
        if identity.name != template, DevIdTemplate.hasPlaceholder(identity.name) {
            copy.identity.name = DevIdTemplate.expand(identity.name, index: index)
        }
        copy.broker = broker.credentials(devId: devId, index: index)
        return copy
    }

    /// The same profile for another device id (checked like a devId in a file). A name that was
    /// the old devId follows the new one.
    public func withDevId(_ devId: String) throws(ProfileError) -> DeviceProfile {
        if let problem = DevIdTemplate.problem(devId) {
            throw fleetError(problem)
        }
        if DevIdTemplate.hasPlaceholder(devId) {
            throw fleetError("expected a concrete devId, got the template '\(devId)'")
        }
        var copy = self
        if identity.name == identity.devId { copy.identity.name = devId }
        copy.identity.devId = devId
        return copy
    }

    private func fleetError(_ message: String) -> ProfileError {
        ProfileError(kind: .invalidValue, file: sourcePath ?? "<profile>", line: nil, column: nil,
                     field: "identity.devId", message: message)
    }
}

/// The rules of a devId and of its `{index}` placeholders.
enum DevIdTemplate {
    static let maxLength = 64

    static func hasPlaceholder(_ s: String) -> Bool { s.contains("{index") }

    /// The devId with every `{index}` / `{index:N}` replaced.
    static func expand(_ template: String, index: Int) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            let after = rest[open...]
            guard let close = after.firstIndex(of: "}"),
                  let width = placeholderWidth(String(after[after.index(after: open)..<close]))
            else {
                out += after
                return out
            }
            let digits = String(index)
            out += String(repeating: "0", count: max(0, width - digits.count)) + digits
            rest = after[after.index(after: close)...]
        }
        return out + rest
    }

    /// nil for `{index}` (width 0, no padding) / `{index:N}` (width N, 1...12); nil otherwise.
    private static func placeholderWidth(_ inner: String) -> Int? {
        if inner == "index" { return 0 }
        guard inner.hasPrefix("index:"), let n = Int(inner.dropFirst("index:".count)), (1...12).contains(n) else {
            return nil
        }
        return n
    }

    /// What is wrong with a devId (or devId template), or nil.
    static func problem(_ s: String) -> String? {
        if s.isEmpty { return "expected a non-empty device id" }
        // Check placeholders, and measure the id with each one at its narrowest.
        var plain = ""
        var rest = Substring(s)
        while let open = rest.firstIndex(of: "{") {
            plain += rest[..<open]
            let after = rest[open...]
            guard let close = after.firstIndex(of: "}") else {
                return "expected '}' to close the placeholder in devId '\(s)'"
            }
            let inner = String(after[after.index(after: open)..<close])
            guard let width = placeholderWidth(inner) else {
                return "unknown placeholder '{\(inner)}' in devId '\(s)'; the only one is {index} (or {index:N}, zero-padded to N digits, N from 1 to 12)"
            }
            plain += String(repeating: "0", count: max(1, width))
            rest = after[after.index(after: close)...]
        }
        plain += rest
        let allowed: (Unicode.Scalar) -> Bool = {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || $0 == "_" || $0 == "-" || $0 == "."
        }
        if let bad = plain.unicodeScalars.first(where: { !allowed($0) }) {
            return "character '\(bad)' is not allowed in a devId (use letters, digits, '_', '-', '.'), got '\(s)'"
        }
        if plain.count > maxLength {
            return "expected a devId of at most \(maxLength) characters, got \(plain.count)"
        }
        return nil
    }
}

extension DeviceProfile.Broker {
    /// Per-device credentials (load testers' request): `{index}` / `{index:N}` and `{devId}` in the
    /// username, the password and the TLS client certificate and key paths, filled in.
    public func credentials(devId: String, index: Int) -> DeviceProfile.Broker {
        func fill(_ text: String?) -> String? {
            guard var text else { return nil }
            if DevIdTemplate.hasPlaceholder(text) { text = DevIdTemplate.expand(text, index: index) }
            return text.replacingOccurrences(of: "{devId}", with: devId)
        }
        var copy = self
        copy.username = fill(username)
        copy.password = fill(password)
        copy.certFile = fill(certFile)
        copy.keyFile = fill(keyFile)
        return copy
    }
}

extension DeviceProfile.BrokerURL {
    public struct ParseProblem: Error, Sendable, Equatable {
        public var message: String
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]` (IPv6 in brackets; a trailing `/` is
    /// fine; no user info, path or query: credentials have their own fields).
    public static func parse(_ text: String) -> Result<Self, ParseProblem> {
        func fail(_ why: String) -> Result<Self, ParseProblem> {
            .failure(ParseProblem(message: "expected an mqtt://host[:port] or mqtts://host[:port] url, got '\(text)' (\(why))"))
        }
        let tls: Bool
        var rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            return fail("the scheme must be mqtt or mqtts")
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("@") { return fail("put credentials in broker.username and broker.password") }
        if rest.contains("/") || rest.contains("?") || rest.contains("#") { return fail("no path or query") }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return fail("unclosed '[' in an IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return fail("unexpected text after the address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        if host.isEmpty { return fail("no host") }
        if host.contains(where: { $0 == " " || $0 == "\t" }) { return fail("spaces in the host") }
        var port: Int?
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { return fail("the port must be 1 to 65535") }
            port = p
        }
        return .success(Self(tls: tls, host: String(host), port: port))
    }
}
