// The profile's `display` and `audio` sections: the device's screen (where the caller's video goes)
// and its sound (its own voice, and where the caller's goes). Issue 14 part 2.

extension DeviceProfile {
    /// Where the app's video goes (a screen IPC shows the caller). Default `none`: received video
    /// is counted (and kept for snapshots) only.
    public enum Display: Sendable, Equatable, CustomStringConvertible {
        case none
        /// A desktop window drawn by `sink` (`ximagesink` by default) on the X display `xDisplay`
        /// (nil: `$DISPLAY`).
        case window(sink: String, xDisplay: String?)
        /// Full screen without a desktop (a Raspberry Pi's HDMI), GStreamer's `kmssink`.
        case kms(connector: Int?, driver: String?)
        /// Recorded to a file (QA evidence).
        case file(Recording)

        public static let typeNames = ["none", "window", "kms", "file"]
        public static let windowSinks = ["ximagesink", "xvimagesink", "autovideosink", "glimagesink", "waylandsink"]

        public var typeName: String {
            switch self {
            case .none: "none"
            case .window: "window"
            case .kms: "kms"
            case .file: "file"
            }
        }

        public var description: String {
            switch self {
            case .none: "none"
            case .window(let sink, let xDisplay): "window (\(sink)" + (xDisplay.map { " on \($0)" } ?? "") + ")"
            case .kms(let connector, _): "kms" + (connector.map { " connector \($0)" } ?? "")
            case .file(let r): "file \(r.pathTemplate)" + (r.reencode ? " (re-encoded)" : "")
            }
        }
    }

    /// A recording of the app's video: `.mkv` (Matroska) or `.mp4`.
    public struct Recording: Sendable, Equatable {
        /// Absolute path; may hold `{devId}` and `{sessionId}` (`{devId}` is filled in per device).
        public var pathTemplate: String
        /// Decode and encode again (x264) instead of writing the received H.264 as it came.
        public var reencode: Bool

        public static let placeholders = ["{devId}", "{sessionId}"]
        public static let extensions = [".mkv", ".mp4"]

        public init(pathTemplate: String, reencode: Bool = false) {
            self.pathTemplate = pathTemplate
            self.reencode = reencode
        }

        /// The file for one link: placeholders filled in (characters outside `A-Z a-z 0-9 _ - .`
        /// in the values become `_`, so a session id cannot climb out of the folder).
        public func path(devId: String, sessionId: String) -> String {
            pathTemplate.replacingOccurrences(of: "{devId}", with: Self.safe(devId))
                .replacingOccurrences(of: "{sessionId}", with: Self.safe(sessionId))
        }

        static func safe(_ text: String) -> String {
            let cleaned = String(text.unicodeScalars.map { scalar -> Character in
                let ok = (scalar.value >= 0x30 && scalar.value <= 0x39) || (scalar.value >= 0x41 && scalar.value <= 0x5A)
                    || (scalar.value >= 0x61 && scalar.value <= 0x7A) || scalar == "_" || scalar == "-" || scalar == "."
                return ok ? Character(scalar) : "_"
            }.prefix(128))
            return cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) ? "_" : cleaned
        }
    }

    /// The device's sound: its own voice, and where the app's audio goes.
    public struct Sound: Sendable, Equatable {
        public enum Source: Sendable, Equatable {
            /// A 440 Hz test tone (the default).
            case tone
            /// An ALSA capture PCM by name (`ipcemu cameras` lists them).
            case alsa(device: String)
        }
        public enum Playback: Sendable, Equatable {
            /// Counted only (the default).
            case none
            /// An ALSA playback PCM by name.
            case alsa(device: String)
        }

        public var source: Source
        public var playback: Playback

        public init(source: Source = .tone, playback: Playback = .none) {
            self.source = source
            self.playback = playback
        }
    }
}

// MARK: - Parsing

extension ProfileParser {
    static let displayKeys = ["type", "sink", "xDisplay", "connector", "driver", "path", "reencode"]

    func display(_ top: MappingReader, capabilities: Profile.Capabilities?) -> Profile.Display? {
        guard let node = top["display"] else { return Profile.Display.none }
        guard let m = diagnostics.mapping(node, at: "display", allowed: Self.displayKeys) else { return nil }
        guard m.has("type") else { return m.missing("type", "one of \(Profile.Display.typeNames.joined(separator: ", "))") }
        guard let type = m.oneOf("type", Profile.Display.typeNames) else { return nil }
        if type != "none", let capabilities, !capabilities.twoWay {
            diagnostics.add(.inconsistent, at: m["type"]?.mark ?? m.mark, field: "display.type",
                            "a display shows the caller's video, which needs capabilities.twoWay: true (got false)")
            return nil
        }
        switch type {
        case "window":
            guard m.refuse(keysOutside: ["type", "sink", "xDisplay"], because: "a window display") else { return nil }
            let sink = m.oneOf("sink", Profile.Display.windowSinks)
            if m.has("sink"), sink == nil { return nil }
            let xDisplay = m.string("xDisplay", expected: "an X display name such as :0", check: { text in
                text.isEmpty || text.contains(where: { $0.isWhitespace || $0 == "\"" }) ? "expected an X display name such as :0, got '\(text)'" : nil
            })
            if m.has("xDisplay") {
                if xDisplay == nil { return nil }
                if !["ximagesink", "xvimagesink"].contains(sink ?? "ximagesink") {
                    diagnostics.add(.inconsistent, at: m["xDisplay"]?.mark ?? m.mark, field: m.field("xDisplay"),
                                    "xDisplay goes with sink ximagesink or xvimagesink (got \(sink ?? "ximagesink")); \(sink ?? "") uses $DISPLAY")
                    return nil
                }
            }
            return .window(sink: sink ?? "ximagesink", xDisplay: xDisplay)
        case "kms":
            guard m.refuse(keysOutside: ["type", "connector", "driver"], because: "a kms display") else { return nil }
            let connector = m.int("connector", in: 0...100_000)
            let driver = m.string("driver", expected: "a DRM driver name such as vc4", check: nonEmpty)
            if (m.has("connector") && connector == nil) || (m.has("driver") && driver == nil) { return nil }
            return .kms(connector: connector, driver: driver)
        case "file":
            guard m.refuse(keysOutside: ["type", "path", "reencode"], because: "a file display") else { return nil }
            let path = m.requiredString("path", expected: "a file path ending in .mkv or .mp4", check: Self.recordingPathProblem)
            let reencode = m.bool("reencode")
            if m.has("reencode"), reencode == nil { return nil }
            guard let path else { return nil }
            return .file(Profile.Recording(pathTemplate: resolve(path), reencode: reencode ?? false))
        default:
            guard m.refuse(keysOutside: ["type"], because: "display none") else { return nil }
            return Profile.Display.none
        }
    }

    static func recordingPathProblem(_ text: String) -> String? {
        if text.isEmpty { return "expected a file path ending in .mkv or .mp4, got an empty string" }
        var rest = text
        for placeholder in Profile.Recording.placeholders { rest = rest.replacingOccurrences(of: placeholder, with: "") }
        if rest.contains("{") || rest.contains("}") {
            return "the only placeholders in a recording path are {devId} and {sessionId}, got '\(text)'"
        }
        let lower = text.lowercased()
        guard Profile.Recording.extensions.contains(where: { lower.hasSuffix($0) }) else {
            return "expected a path ending in .mkv (Matroska) or .mp4, got '\(text)'"
        }
        if text.hasSuffix("/.mkv") || text.hasSuffix("/.mp4") || text == ".mkv" || text == ".mp4" {
            return "expected a file name before the extension, got '\(text)'"
        }
        return nil
    }

    static let soundKeys = ["source", "captureDevice", "playback", "playbackDevice"]

    func sound(_ top: MappingReader, capabilities: Profile.Capabilities?) -> Profile.Sound? {
        guard let node = top["audio"] else { return Profile.Sound() }
        guard let m = diagnostics.mapping(node, at: "audio", allowed: Self.soundKeys) else { return nil }
        let source = m.oneOf("source", ["tone", "alsa"])
        let playback = m.oneOf("playback", ["none", "alsa"])
        if (m.has("source") && source == nil) || (m.has("playback") && playback == nil) { return nil }
        let alsaName = "an ALSA device name such as default or plughw:CARD=Device,DEV=0 (ipcemu cameras lists them)"
        let capture = m.string("captureDevice", expected: alsaName, check: Self.alsaNameProblem)
        let output = m.string("playbackDevice", expected: alsaName, check: Self.alsaNameProblem)
        if (m.has("captureDevice") && capture == nil) || (m.has("playbackDevice") && output == nil) { return nil }
        if let capabilities, capabilities.audio == nil, source == "alsa" || playback == "alsa" {
            let key = source == "alsa" ? "source" : "playback"
            diagnostics.add(.inconsistent, at: m[key]?.mark ?? m.mark, field: m.field(key),
                            "ALSA audio needs audio, but capabilities.audio is none")
            return nil
        }
        var sound = Profile.Sound()
        if source == "alsa" {
            guard let capture else { return m.missing("captureDevice", "\(alsaName), with source alsa") }
            sound.source = .alsa(device: capture)
        } else if m.has("captureDevice") {
            diagnostics.add(.inconsistent, at: m["captureDevice"]?.mark ?? m.mark, field: m.field("captureDevice"),
                            "captureDevice goes with source: alsa (the source is \(source ?? "tone"))")
            return nil
        }
        if playback == "alsa" {
            guard let output else { return m.missing("playbackDevice", "\(alsaName), with playback alsa") }
            sound.playback = .alsa(device: output)
        } else if m.has("playbackDevice") {
            diagnostics.add(.inconsistent, at: m["playbackDevice"]?.mark ?? m.mark, field: m.field("playbackDevice"),
                            "playbackDevice goes with playback: alsa (the playback is \(playback ?? "none"))")
            return nil
        }
        return sound
    }

    static func alsaNameProblem(_ text: String) -> String? {
        if text.isEmpty { return "expected an ALSA device name, got an empty string" }
        if let bad = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "expected an ALSA device name, got a control character U+\(String(bad.value, radix: 16, uppercase: true))"
        }
        return text.count > 256 ? "expected an ALSA device name of at most 256 characters" : nil
    }
}
