import Foundation
import IPCWire
import Yams

extension DeviceProfile {
    /// The top-level sections of a profile, in the order the documentation lists them.
    public static let sectionNames = [
        "identity", "capabilities", "behaviour", "timers", "camera", "display", "audio", "security", "topics", "broker",
        "doorbell", "power", "dps", "push", "cloud",
    ]

    /// Reads and validates a profile file. Relative paths inside it (clip, TLS files) are relative
    /// to the file's folder.
    public static func load(path: String) throws(ProfileError) -> DeviceProfile {
        func unreadable(_ message: String) -> ProfileError {
            ProfileError(kind: .unreadable, file: path, line: nil, column: nil, field: "", message: message)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw unreadable("no such file")
        }
        guard !isDirectory.boolValue else { throw unreadable("is a folder, expected a YAML file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw unreadable("cannot read the file (permission denied?)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw unreadable("expected UTF-8 text, the file holds other bytes")
        }
        return try parse(yaml: text, fileName: path)
    }

    /// Parses and validates profile text. `fileName` names the source in errors and anchors
    /// relative paths (the current folder when nil).
    public static func parse(yaml: String, fileName: String? = nil) throws(ProfileError) -> DeviceProfile {
        let file = fileName ?? "<yaml>"
        let root: Node
        do {
            // `.basic`: no NSRegularExpression (ICU) per scalar; `Node.tagName` resolves them.
            guard let node = try Yams.compose(yaml: yaml, .basic) else {
                throw ProfileError(
                    kind: .empty, file: file, line: nil, column: nil, field: "",
                    message: "the profile is empty: expected a mapping with at least an 'identity' section")
            }
            root = node
        } catch let error as ProfileError {
            throw error
        } catch let error as YamlError {
            throw notYAML(error, file: file)
        } catch {
            throw ProfileError(kind: .notYAML, file: file, line: nil, column: nil, field: "",
                               message: "not valid YAML: \(error)")
        }
        let base: String
        if let fileName {
            base = URL(fileURLWithPath: fileName).deletingLastPathComponent().path
        } else {
            base = FileManager.default.currentDirectoryPath
        }
        let parser = ProfileParser(diagnostics: Diagnostics(file: file), baseDirectory: base)
        let profile = parser.profile(root)
        if let first = parser.diagnostics.first { throw first }
        guard var profile else {
            // Unreachable: a section only fails after recording why. Kept as a typed error, not a crash.
            throw ProfileError(kind: .invalidValue, file: file, line: nil, column: nil, field: "",
                               message: "the profile is not valid")
        }
        profile.sourcePath = fileName
        profile.warnings = parser.diagnostics.warnings
        return profile
    }

    private static func notYAML(_ error: YamlError, file: String) -> ProfileError {
        func make(_ context: YamlError.Context?, _ problem: String, _ mark: Mark) -> ProfileError {
            var message = "not valid YAML: \(problem)"
            if let context { message += " (\(context.text), line \(context.mark.line))" }
            return ProfileError(kind: .notYAML, file: file, line: mark.line, column: mark.column, field: "",
                                message: message)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _): return make(context, problem, mark)
        case .parser(let context, let problem, let mark, _): return make(context, problem, mark)
        case .composer(let context, let problem, let mark, _): return make(context, problem, mark)
        case .reader(let problem, let offset, _, let yaml):
            var line: Int?
            if let offset, offset <= yaml.count {
                line = yaml.prefix(offset).reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            }
            return ProfileError(kind: .notYAML, file: file, line: line, column: nil, field: "",
                                message: "not valid YAML text: \(problem)")
        default:
            return ProfileError(kind: .notYAML, file: file, line: nil, column: nil, field: "",
                                message: "not valid YAML: \(error)")
        }
    }
}

/// Reads each section, recording every independent mistake; cross-field rules run only on fields
/// that read cleanly, so they never blame a value that was defaulted after an error.
struct ProfileParser {
    let diagnostics: Diagnostics
    let baseDirectory: String

    typealias Profile = DeviceProfile

    /// Runs `body`; its result counts only if it recorded no new mistake.
    private func clean<T>(_ body: () -> T?) -> T? {
        let before = diagnostics.errors.count
        let value = body()
        return diagnostics.errors.count == before ? value : nil
    }

    func profile(_ root: Node) -> Profile? {
        guard let top = diagnostics.mapping(
            root, at: "", allowed: Profile.sectionNames,
            expected: "a mapping of profile sections (\(Profile.sectionNames.joined(separator: ", ")))")
        else { return nil }

        let identity = clean { self.identity(top) }
        let capabilities = clean { self.capabilities(top) }
        let behaviour = clean { self.behaviour(top, capabilities: capabilities) }
        let timers = clean { self.timers(top) }
        let camera = clean { self.camera(top, capabilities: capabilities) }
        let security = clean { () -> Profile.SecurityMode? in
            guard top.has("security") else { return .plain }
            return top.oneOf("security", Profile.SecurityMode.allCases.map(\.rawValue))
                .flatMap(Profile.SecurityMode.init(rawValue:))
        }
        let topics = clean { self.topics(top) }
        let broker = clean { self.broker(top) }
        let display = clean { self.display(top, capabilities: capabilities) }
        let sound = clean { self.sound(top, capabilities: capabilities) }
        // PROTOCOL.md 8 and 9 (Doorbell.swift, Power.swift, DataPointsProfile.swift, Push.swift, CloudProfile.swift).
        let doorbell = clean { self.doorbell(top, capabilities: capabilities) }
        let power = clean { self.power(top, kind: doorbell?.kind) }
        let dataPoints = clean { self.dataPoints(top, kind: doorbell?.kind, power: power) }
        let push = clean { self.push(top) }
        let cloud = clean { self.cloud(top) }
        guard let identity, let capabilities, let behaviour, let timers, let camera, let security,
              let topics, let broker, let display, let sound, let doorbell, let power, let dataPoints, let push,
              let cloud
        else { return nil }
        var profile = Profile(identity: identity, capabilities: capabilities, behaviour: behaviour, timers: timers,
                              camera: camera, security: security, topics: topics, broker: broker)
        profile.display = display
        profile.audio = sound
        profile.doorbell = doorbell
        profile.power = power
        profile.dataPoints = dataPoints
        profile.push = push
        profile.cloud = cloud
        return profile
    }

    // MARK: identity

    static let identityKeys = ["devId", "localKey", "p2pPassword", "name", "category", "productId"]

    func identity(_ top: MappingReader) -> Profile.Identity? {
        guard let node = top["identity"] else {
            return top.missing("identity", "a mapping with devId, localKey, p2pPassword and category")
        }
        guard let m = diagnostics.mapping(node, at: "identity", allowed: Self.identityKeys) else { return nil }
        let devId = m.requiredString("devId", expected: "a device id", check: DevIdTemplate.problem)
        let localKey = m.requiredString("localKey", expected: "exactly 16 ASCII characters", check: localKeyProblem)
        let p2pPassword = m.requiredString("p2pPassword", expected: "a non-empty string", check: nonEmpty)
        let name = m.string("name", check: nonEmpty)
        let category = m.requiredString("category", expected: "a product category such as sp_dpsxj",
                                        check: categoryProblem)
        let productId = m.string("productId", check: nonEmpty)
        guard let devId, let localKey, let p2pPassword, let category else { return nil }
        return Profile.Identity(devId: devId, localKey: localKey, p2pPassword: p2pPassword, name: name,
                                category: category, productId: productId)
    }

    // MARK: capabilities

    static let capabilityKeys = ["channelTypes", "callTypes", "twoWay", "liveView", "liveViewLimit", "video", "audio", "rtcCapability"]
    static let channelTypeNames = [0: "audio", 1: "video", 2: "audio and video"]
    static let callTypeNames = [1: "one-to-one", 2: "one-to-more", 3: "one-to-more special"]

    func capabilities(_ top: MappingReader) -> Profile.Capabilities? {
        guard let node = top["capabilities"] else { return Profile.Capabilities() }
        guard let m = diagnostics.mapping(node, at: "capabilities", allowed: Self.capabilityKeys) else { return nil }
        let before = diagnostics.errors.count

        let video = media(m, "video", allowed: ["codecs", "main", "sub"], absent: Profile.Video()) { v in self.video(v) }
        let audio = media(m, "audio", allowed: ["codecs"], absent: Profile.Audio()) { a in self.audio(a) }
        let channelTypes = m["channelTypes"].flatMap { n in
            diagnostics.uniqueList(
                n, at: m.field("channelTypes"), expected: "a list of channel types (0 audio, 1 video, 2 both)",
                allowEmpty: false,
                item: { diagnostics.intChoice($0, at: $1, Self.channelTypeNames).flatMap(ChannelType.init(rawValue:)) },
                describeItem: { "\($0.rawValue)" })
        }
        let callTypes = m["callTypes"].flatMap { n in
            diagnostics.uniqueList(
                n, at: m.field("callTypes"), expected: "a list of call types (1, 2, 3)", allowEmpty: false,
                item: { diagnostics.intChoice($0, at: $1, Self.callTypeNames).flatMap(CallType.init(rawValue:)) },
                describeItem: { "\($0.rawValue)" })
        }
        let twoWay = m.bool("twoWay")
        let liveView = m.bool("liveView")
        let liveViewLimit = m.int("liveViewLimit", in: 0...10_000)
        let rtcCapability = m.int("rtcCapability", in: 0...7)
        guard diagnostics.errors.count == before, let video, let audio else { return nil }

        // Media and channel types must agree (PROTOCOL.md 3 extra.channelType).
        if video == nil && audio == nil {
            diagnostics.add(.inconsistent, at: m.mark, field: "capabilities",
                            "a device needs audio or video, but capabilities.video and capabilities.audio are both none")
            return nil
        }
        var derivedChannels: [ChannelType] = []
        if audio != nil { derivedChannels.append(.audio) }
        if video != nil { derivedChannels.append(.video) }
        if audio != nil && video != nil { derivedChannels.append(.audioVideo) }
        if let channelTypes, let list = m["channelTypes"] {
            for (i, type) in channelTypes.enumerated() {
                let needsVideo = type != .audio, needsAudio = type != .video
                let itemNode = (list.sequence?[i]) ?? list
                if needsVideo && video == nil {
                    diagnostics.add(.inconsistent, at: itemNode.mark, field: "capabilities.channelTypes[\(i)]",
                                    "channel type \(type.rawValue) (\(Self.channelTypeNames[type.rawValue] ?? "")) needs video, but capabilities.video is none")
                    return nil
                }
                if needsAudio && audio == nil {
                    diagnostics.add(.inconsistent, at: itemNode.mark, field: "capabilities.channelTypes[\(i)]",
                                    "channel type \(type.rawValue) (\(Self.channelTypeNames[type.rawValue] ?? "")) needs audio, but capabilities.audio is none")
                    return nil
                }
            }
        }
        var caps = Profile.Capabilities(
            channelTypes: channelTypes ?? derivedChannels,
            callTypes: callTypes ?? CallType.allCases,
            twoWay: twoWay ?? true,
            liveView: liveView ?? false,
            video: video,
            audio: audio)
        if let liveViewLimit { caps.liveViewLimit = liveViewLimit }
        if let rtcCapability, let rtcNode = m["rtcCapability"], rtcCapability != caps.rtcCapability.rawValue {
            let derived = caps.rtcCapability
            var parts: [String] = []
            parts.append(derived.contains(.audio) ? "audio 1" : "no audio")
            parts.append(derived.contains(.video) ? "video 2" : "no video")
            parts.append(derived.contains(.twoWay) ? "two-way 4" : "no two-way")
            diagnostics.add(.inconsistent, at: rtcNode.mark, field: "capabilities.rtcCapability",
                            "expected \(derived.rawValue) (\(parts.joined(separator: ", ")), from the other capabilities), got \(rtcCapability)")
            return nil
        }
        return caps
    }

    /// `video:` / `audio:`: absent gives the default, `none` says the device has none, else a mapping.
    /// Returns nil on error, `.some(nil)` for none.
    private func media<T>(_ m: MappingReader, _ key: String, allowed: [String], absent: T,
                          read: (MappingReader) -> T?) -> T?? {
        guard let node = m[key] else { return .some(absent) }
        if case .scalar(let s) = node, s.string == "none", node.tagName == .str { return .some(nil) }
        let expected = "a mapping with keys \(allowed.joined(separator: ", ")), or 'none' for a device without \(key)"
        guard let reader = diagnostics.mapping(node, at: m.field(key), allowed: allowed, expected: expected) else {
            return nil
        }
        guard let value = clean({ read(reader) }) else { return nil }
        return .some(value)
    }

    func video(_ m: MappingReader) -> Profile.Video? {
        let codecs = m["codecs"].flatMap { n in
            diagnostics.uniqueList(
                n, at: m.field("codecs"), expected: "a list of video codecs (H264, H265)", allowEmpty: false,
                item: { diagnostics.oneOf($0, at: $1, Profile.VideoCodec.allCases.map(\.rawValue))
                    .flatMap(Profile.VideoCodec.init(rawValue:)) },
                describeItem: { $0.rawValue })
        }
        let main = m["main"].flatMap { stream($0, at: m.field("main")) }
        let sub = m["sub"].flatMap { stream($0, at: m.field("sub")) }
        let video = Profile.Video(codecs: codecs ?? [.h264], main: main ?? .defaultMain, sub: sub)
        if let subNode = m["sub"], sub != nil,
           video.sub.width > video.main.width || video.sub.height > video.main.height {
            diagnostics.add(.inconsistent, at: subNode.mark, field: m.field("sub"),
                            "expected a sub stream no larger than the main stream (\(video.main.width)x\(video.main.height)), got \(video.sub.width)x\(video.sub.height)")
        }
        return video
    }

    func stream(_ node: Node, at path: String) -> Profile.StreamFormat? {
        guard let m = diagnostics.mapping(node, at: path, allowed: ["width", "height", "fps"]) else { return nil }
        typealias L = Profile.StreamFormat.Limits
        let even: (String) -> (Int) -> String? = { what in
            { $0 % 2 == 0 ? nil : "expected an even \(what) (H.264 4:2:0 video), got \($0)" }
        }
        let width = m.has("width") ? m.int("width", in: L.width, check: even("width")) : m.missing("width", "a positive integer")
        let height = m.has("height") ? m.int("height", in: L.height, check: even("height")) : m.missing("height", "a positive integer")
        let fps = m.has("fps") ? m.int("fps", in: L.fps) : m.missing("fps", "a positive integer")
        guard let width, let height, let fps else { return nil }
        return Profile.StreamFormat(width: width, height: height, fps: fps)
    }

    func audio(_ m: MappingReader) -> Profile.Audio? {
        let codecs = m["codecs"].flatMap { n in
            diagnostics.uniqueList(
                n, at: m.field("codecs"), expected: "a list of audio codecs (PCMA, OPUS)", allowEmpty: false,
                item: { diagnostics.oneOf($0, at: $1, Profile.AudioCodec.allCases.map(\.rawValue))
                    .flatMap(Profile.AudioCodec.init(rawValue:)) },
                describeItem: { $0.rawValue })
        }
        return Profile.Audio(codecs: codecs ?? [.pcma, .opus])
    }

    // MARK: behaviour

    static let behaviourKeys = ["answerPolicy", "answerDelay", "household", "callType", "channelType", "callTimeout"]

    func behaviour(_ top: MappingReader, capabilities: Profile.Capabilities?) -> Profile.Behaviour? {
        let defaultChannel: (Profile.Capabilities) -> ChannelType = { caps in
            caps.channelTypes.contains(.audioVideo) ? .audioVideo
                : caps.channelTypes.max { $0.rawValue < $1.rawValue } ?? .audioVideo
        }
        guard let node = top["behaviour"] else {
            var b = Profile.Behaviour()
            if let capabilities {
                b.channelType = defaultChannel(capabilities)
                b.callType = capabilities.callTypes.contains(.oneToOne) ? .oneToOne : capabilities.callTypes.first ?? .oneToOne
            }
            return b
        }
        guard let m = diagnostics.mapping(node, at: "behaviour", allowed: Self.behaviourKeys) else { return nil }
        let policyName = m.oneOf("answerPolicy", Profile.AnswerPolicy.names)
        let answerDelay = m.seconds("answerDelay", allowZero: true)
        let household = m["household"].flatMap { n in
            diagnostics.uniqueList(
                n, at: m.field("household"), expected: "a list of app user ids", allowEmpty: true,
                item: { diagnostics.string($0, at: $1, expected: "an app user id", check: userIdProblem) },
                describeItem: { "'\($0)'" })
        }
        let callType = m["callType"].flatMap {
            diagnostics.intChoice($0, at: m.field("callType"), Self.callTypeNames).flatMap(CallType.init(rawValue:))
        }
        let channelType = m["channelType"].flatMap {
            diagnostics.intChoice($0, at: m.field("channelType"), Self.channelTypeNames).flatMap(ChannelType.init(rawValue:))
        }
        let callTimeout = m.seconds("callTimeout")

        // answerDelay delays an answer or a reject. With any other policy it is ignored with a
        // warning, not refused: flipping the policy in a test stays a one-line change.
        let policy: Profile.AnswerPolicy
        switch policyName ?? "answer" {
        case "reject": policy = (answerDelay ?? 0) > 0 ? .rejectAfter(seconds: answerDelay ?? 0) : .reject
        case "ignore": policy = .ignore
        case "busy": policy = .busy
        case "manual": policy = .manual
        default: policy = .answer(afterSeconds: answerDelay ?? 1)
        }
        if let delayNode = m["answerDelay"], let policyName, !["answer", "reject"].contains(policyName) {
            diagnostics.warn(at: delayNode.mark, field: m.field("answerDelay"),
                             "answerDelay applies to answerPolicy 'answer' or 'reject', not '\(policyName)': ignored")
        }
        var result = Profile.Behaviour(answerPolicy: policy, household: household ?? [], callTimeout: callTimeout ?? 30)
        if let capabilities {
            if let callType, let n = m["callType"], !capabilities.callTypes.contains(callType) {
                diagnostics.add(.inconsistent, at: n.mark, field: m.field("callType"),
                                "call type \(callType.rawValue) is not in capabilities.callTypes \(capabilities.callTypes.map(\.rawValue))")
            }
            if let channelType, let n = m["channelType"], !capabilities.channelTypes.contains(channelType) {
                diagnostics.add(.inconsistent, at: n.mark, field: m.field("channelType"),
                                "channel type \(channelType.rawValue) is not in capabilities.channelTypes \(capabilities.channelTypes.map(\.rawValue))")
            }
            result.channelType = channelType ?? defaultChannel(capabilities)
            result.callType = callType
                ?? (capabilities.callTypes.contains(.oneToOne) ? .oneToOne : capabilities.callTypes.first ?? .oneToOne)
        }
        return result
    }

    // MARK: timers

    func timers(_ top: MappingReader) -> Profile.Timers? {
        guard let node = top["timers"] else { return Profile.Timers() }
        let keys = ["heartbeatInterval", "heartbeatTimeout", "connectTimeout"]
        guard let m = diagnostics.mapping(node, at: "timers", allowed: keys) else { return nil }
        let defaults = Profile.Timers()
        let interval = m.seconds("heartbeatInterval")
        let timeout = m.seconds("heartbeatTimeout")
        let connect = m.seconds("connectTimeout")
        let timers = Profile.Timers(
            heartbeatInterval: interval ?? defaults.heartbeatInterval,
            heartbeatTimeout: timeout ?? defaults.heartbeatTimeout,
            connectTimeout: connect ?? defaults.connectTimeout)
        if (m.has("heartbeatInterval") ? interval != nil : true), (m.has("heartbeatTimeout") ? timeout != nil : true),
           timers.heartbeatTimeout <= timers.heartbeatInterval {
            let blame = m.has("heartbeatTimeout") ? "heartbeatTimeout" : "heartbeatInterval"
            let mark = m[blame]?.mark
            let note: (String) -> String = { m.has($0) ? "" : ", the default" }
            diagnostics.add(.inconsistent, at: mark, field: m.field(blame),
                            "expected heartbeatTimeout (\(formatSeconds(timers.heartbeatTimeout))\(note("heartbeatTimeout"))) to be longer than heartbeatInterval (\(formatSeconds(timers.heartbeatInterval))\(note("heartbeatInterval")))")
        }
        return timers
    }

    // MARK: camera

    static let cameraKeys = ["type", "device", "format", "width", "height", "fps", "path"]

    func camera(_ top: MappingReader, capabilities: Profile.Capabilities?) -> Profile.CameraSource? {
        guard let node = top["camera"] else { return .testPattern }
        guard let m = diagnostics.mapping(node, at: "camera", allowed: Self.cameraKeys) else { return nil }
        guard m.has("type") else { return m.missing("type", "one of \(Profile.CameraSource.typeNames.joined(separator: ", "))") }
        guard let type = m.oneOf("type", Profile.CameraSource.typeNames) else { return nil }
        if let capabilities, capabilities.video == nil {
            diagnostics.add(.inconsistent, at: m.mark, field: "camera",
                            "a camera needs video, but capabilities.video is none (remove the camera section)")
            return nil
        }
        let main = capabilities?.video?.main ?? .defaultMain
        switch type {
        case "v4l2":
            guard m.refuse(keysOutside: ["type", "device", "format", "width", "height", "fps"], because: "a v4l2 camera")
            else { return nil }
            let device = m.requiredString("device", expected: "a device path such as /dev/video0 or a camera name",
                                          check: nonEmpty)
            let format = m.oneOf("format", Profile.PixelFormat.allCases.map(\.rawValue)).flatMap(Profile.PixelFormat.init(rawValue:))
            let width = m.int("width", in: 16...7680)
            let height = m.int("height", in: 16...4320)
            let fps = m.int("fps", in: 1...120)
            if format == .h265, let video = capabilities?.video, !video.codecs.contains(.h265) {
                diagnostics.add(.inconsistent, at: m["format"]?.mark ?? m.mark, field: m.field("format"),
                                "an H.265 camera feeds only the fmp4Stream data channel: list H265 in capabilities.video.codecs")
                return nil
            }
            guard let device else { return nil }
            return .v4l2(Profile.V4L2Camera(
                device: device, format: format ?? .auto, width: width ?? main.width, height: height ?? main.height,
                fps: fps ?? main.fps))
        case "clip":
            guard m.refuse(keysOutside: ["type", "path", "fps"], because: "a clip camera") else { return nil }
            let path = m.requiredString("path", expected: "the path of an H.264 or H.265 Annex-B file") { text in
                if text.isEmpty { return "expected the path of an H.264 or H.265 Annex-B file, got an empty string" }
                let full = self.resolve(text)
                return FileManager.default.fileExists(atPath: full) ? nil : "file not found: \(full)"
            }
            let fps = m.int("fps", in: Profile.StreamFormat.Limits.fps)
            guard let path else { return nil }
            return .clip(Profile.ClipFile(path: resolve(path), fps: fps ?? main.fps))
        default:
            guard m.refuse(keysOutside: ["type"], because: "the testPattern camera, which always uses the main stream's size and rate")
            else { return nil }
            return .testPattern
        }
    }

    // MARK: topics

    func topics(_ top: MappingReader) -> TopicTemplates? {
        guard let node = top["topics"] else { return TopicTemplates() }
        guard let m = diagnostics.mapping(node, at: "topics", allowed: ["in", "out", "meta"]) else { return nil }
        let check = TopicTemplates.problem(with:)
        let t = TopicTemplates(
            in: m.string("in", expected: "a topic template", check: check) ?? TopicTemplates.defaultIn,
            out: m.string("out", expected: "a topic template", check: check) ?? TopicTemplates.defaultOut,
            meta: m.string("meta", expected: "a topic template", check: check) ?? TopicTemplates.defaultMeta)
        let pairs: [(String, String, String, String)] = [
            ("out", t.out, "in", t.in), ("meta", t.meta, "in", t.in), ("meta", t.meta, "out", t.out),
        ]
        for (key, value, otherKey, other) in pairs where value == other {
            let blame = m.has(key) ? key : otherKey
            diagnostics.add(.inconsistent, at: m[blame]?.mark ?? m.mark, field: m.field(blame),
                            "expected topics.\(key) to differ from topics.\(otherKey), both are '\(value)'")
            return nil
        }
        return t
    }

    // MARK: broker

    static let brokerKeys = ["url", "username", "password", "caFile", "certFile", "keyFile", "keepAlive"]

    func broker(_ top: MappingReader) -> Profile.Broker? {
        guard let node = top["broker"] else { return Profile.Broker() }
        guard let m = diagnostics.mapping(node, at: "broker", allowed: Self.brokerKeys) else { return nil }
        var url: Profile.BrokerURL?
        _ = m.string("url", expected: "an mqtt:// or mqtts:// url") { text in
            switch Profile.BrokerURL.parse(text) {
            case .success(let parsed): url = parsed; return nil
            case .failure(let problem): return problem.message
            }
        }
        let username = m.string("username") { text in
            if text.isEmpty { return "expected a non-empty username (leave it out to use the devId)" }
            let rest = Self.withoutCredentialPlaceholders(text)
            return rest.contains("{") ? "the only placeholders in a username are {devId} and {index} (or {index:N}), got '\(text)'" : nil
        }
        let password = m.string("password")
        let fileCheck: (String) -> String? = { text in
            if text.isEmpty { return "expected a file path, got an empty string" }
            let full = self.resolve(text)
            // A per-device path (`{devId}`, `{index}`) is checked when a fleet makes the device.
            if Self.withoutCredentialPlaceholders(text) != text { return nil }
            return FileManager.default.fileExists(atPath: full) ? nil : "file not found: \(full)"
        }
        let caFile = m.string("caFile", expected: "a file path", check: fileCheck)
        let certFile = m.string("certFile", expected: "a file path", check: fileCheck)
        let keyFile = m.string("keyFile", expected: "a file path", check: fileCheck)
        let keepAlive = m.int("keepAlive", in: Profile.Broker.keepAliveRange)

        for key in ["caFile", "certFile", "keyFile"] where m.has(key) {
            if url?.tls != true, !(m.has("url") && url == nil) {
                diagnostics.add(.inconsistent, at: m[key]?.mark, field: m.field(key),
                                "\(key) needs an mqtts:// broker url, got \(url.map { "'\($0)'" } ?? "no url")")
                return nil
            }
        }
        if m.has("certFile") != m.has("keyFile") {
            let present = m.has("certFile") ? "certFile" : "keyFile"
            let absent = present == "certFile" ? "keyFile" : "certFile"
            diagnostics.add(.inconsistent, at: m[present]?.mark, field: m.field(present),
                            "\(present) needs \(absent) too (a client certificate and its key)")
            return nil
        }
        return Profile.Broker(
            url: url, username: username, password: password, caFile: caFile.map(resolve),
            certFile: certFile.map(resolve), keyFile: keyFile.map(resolve), keepAlive: keepAlive ?? 30)
    }

    // MARK: helpers

    /// `text` without its `{devId}`, `{index}` and `{index:N}` placeholders.
    static func withoutCredentialPlaceholders(_ text: String) -> String {
        var rest = text.replacingOccurrences(of: TopicTemplates.placeholder, with: "")
        rest = rest.replacingOccurrences(of: "{index}", with: "")
        for width in 1...12 { rest = rest.replacingOccurrences(of: "{index:\(width)}", with: "") }
        return rest
    }

    /// A path from the profile: absolute, `~/...`, or relative to the profile's folder.
    func resolve(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.hasPrefix("~/") {
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(String(path.dropFirst(2))).path
        }
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: baseDirectory, isDirectory: true))
            .standardizedFileURL.path
    }
}

// MARK: - Field rules

func nonEmpty(_ s: String) -> String? {
    s.isEmpty ? "expected a non-empty string" : nil
}

func localKeyProblem(_ s: String) -> String? {
    if let bad = s.unicodeScalars.first(where: { $0.value < 0x20 || $0.value > 0x7E }) {
        let shown = bad.value < 0x20 ? String(format: "U+%04X", bad.value) : "'\(bad)'"
        return "expected exactly 16 ASCII characters, got the non-ASCII character \(shown)"
    }
    let n = s.utf8.count
    return n == 16 ? nil : "expected exactly 16 ASCII characters, got \(n) character\(n == 1 ? "" : "s")"
}

func categoryProblem(_ s: String) -> String? {
    let ok = !s.isEmpty && s.count <= 32 && s.unicodeScalars.allSatisfy {
        ($0.value < 0x80) && (CharacterSet.alphanumerics.contains($0) || $0 == "_")
    }
    return ok ? nil : "expected a product category of 1 to 32 letters, digits or '_' (such as sp_dpsxj), got '\(s)'"
}

func userIdProblem(_ s: String) -> String? {
    if s.isEmpty { return "expected a non-empty app user id" }
    if s.unicodeScalars.contains(where: { CharacterSet.whitespacesAndNewlines.contains($0) || $0.value < 0x20 }) {
        return "expected an app user id without spaces, got '\(s)'"
    }
    return nil
}

extension Diagnostics {
    /// An integer that must be one of a few documented values (`0 (audio), 1 (video), ...`).
    func intChoice(_ node: Node, at path: String, _ names: [Int: String]) -> Int? {
        let listed = names.keys.sorted().map { "\($0) (\(names[$0] ?? ""))" }.joined(separator: ", ")
        guard node.tagName == .int, let value = node.int else {
            add(.wrongType, at: node.mark, field: path, "expected one of \(listed), got \(describe(node))")
            return nil
        }
        guard names[value] != nil else {
            add(.invalidValue, at: node.mark, field: path, "expected one of \(listed), got \(value)")
            return nil
        }
        return value
    }
}
