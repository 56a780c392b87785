/// MQTT topic templates (PROTOCOL.md 1). `{devId}` is the only placeholder and must appear in each.
public struct TopicTemplates: Sendable, Equatable {
    /// To the device.
    public var `in`: String
    /// From the device.
    public var out: String
    /// Device meta, retained; the online flag lives at `meta + "/online"`.
    public var meta: String

    public init(
        in inTemplate: String = TopicTemplates.defaultIn,
        out: String = TopicTemplates.defaultOut,
        meta: String = TopicTemplates.defaultMeta
    ) {
        self.in = inTemplate
        self.out = out
        self.meta = meta
    }

    public static let defaultIn = "smart/device/in/{devId}"
    public static let defaultOut = "smart/device/out/{devId}"
    public static let defaultMeta = "smart/device/meta/{devId}"
    public static let placeholder = "{devId}"
    /// PROTOCOL.md 8.4: the wake topic is `m/w/{devId}` (what go2rtc publishes to); not configurable.
    public static let wakePrefix = "m/w/"

    public func resolved(devId: String) -> ResolvedTopics {
        let meta = meta.replacingOccurrences(of: Self.placeholder, with: devId)
        return ResolvedTopics(
            in: self.in.replacingOccurrences(of: Self.placeholder, with: devId),
            out: out.replacingOccurrences(of: Self.placeholder, with: devId),
            meta: meta,
            online: meta + "/online",
            wake: Self.wakePrefix + devId
        )
    }

    /// What is wrong with a topic template, or nil when it is usable. Rules: not empty, contains
    /// `{devId}`, no other `{...}` placeholder, no MQTT wildcard (`+`, `#`), no NUL, no empty level
    /// in the middle (`a//b`), at most 65535 bytes.
    public static func problem(with template: String) -> String? {
        if template.isEmpty { return "expected a topic template containing {devId}, got an empty string" }
        if template.utf8.count > 65535 { return "expected a topic of at most 65535 bytes" }
        if template.contains("+") || template.contains("#") {
            return "expected a topic without MQTT wildcards (+ or #), got '\(template)'"
        }
        if template.unicodeScalars.contains(where: { $0.value == 0 }) {
            return "expected a topic without NUL characters"
        }
        // Placeholders: every '{' must open exactly `{devId}`.
        var rest = Substring(template)
        var sawDevId = false
        while let open = rest.firstIndex(of: "{") {
            let after = rest[open...]
            guard let close = after.firstIndex(of: "}") else {
                return "expected '}' to close the placeholder in '\(template)'"
            }
            let name = String(after[after.index(after: open)..<close])
            guard "{\(name)}" == placeholder else {
                var hint = ""
                if name.lowercased() == "devid" || editDistance(name, "devId") <= 2 { hint = " (did you mean {devId}?)" }
                return "unknown placeholder '{\(name)}' in '\(template)'; the only placeholder is {devId}\(hint)"
            }
            sawDevId = true
            rest = after[after.index(after: close)...]
        }
        if rest.contains("}") || template.split(separator: "{devId}", omittingEmptySubsequences: false)
            .contains(where: { $0.contains("}") }) {
            return "unbalanced '}' in '\(template)'"
        }
        if !sawDevId { return "expected a topic template containing {devId}, got '\(template)'" }
        if template.contains("//") { return "expected no empty topic level ('//') in '\(template)'" }
        return nil
    }
}

/// The topics of one device.
public struct ResolvedTopics: Sendable, Equatable, Hashable {
    public var `in`: String
    public var out: String
    public var meta: String
    /// Retained online flag and last will: `meta + "/online"` (PROTOCOL.md 1).
    public var online: String
    /// PROTOCOL.md 8.4: a publish here (the CRC32 of the localKey) wakes a sleeping device.
    public var wake: String

    public init(in inTopic: String, out: String, meta: String, online: String, wake: String) {
        self.in = inTopic
        self.out = out
        self.meta = meta
        self.online = online
        self.wake = wake
    }
}
