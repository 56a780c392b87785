import IPCWire

/// Everything that differs between emulated devices (DESIGN.md, PROTOCOL.md): identity, capabilities,
/// answer policy, timers, camera, payload protection, topics and broker.
///
/// Load one with `DeviceProfile.load(path:)` or `DeviceProfile.parse(yaml:fileName:)`; both validate
/// every field and throw a `ProfileError` naming the file, line and field of the first mistake.
/// The memberwise initialisers are for code and tests that build a profile by hand; they trust their
/// arguments (only parsing validates).
public struct DeviceProfile: Sendable, Equatable {
    public var identity: Identity
    public var capabilities: Capabilities
    public var behaviour: Behaviour
    public var timers: Timers
    public var camera: CameraSource
    public var security: SecurityMode
    public var topics: TopicTemplates
    public var broker: Broker
    /// Where the app's video goes (`display`; ScreenAndSound.swift). Default: counted only.
    public var display: Display = .none
    /// The device's own voice and where the app's audio goes (`audio`). Default: tone, counted only.
    public var audio: Sound = Sound()
    /// How a press rings (PROTOCOL.md 8; Doorbell.swift). Default: a screen IPC (§3 calls).
    public var doorbell: Doorbell = Doorbell()
    /// Sleep, wake and battery (PROTOCOL.md 8.4; Power.swift). Default: always awake, on an adapter.
    public var power: Power = Power()
    /// The data points the device has (PROTOCOL.md 8.3; DataPointsProfile.swift). Default: none.
    public var dataPoints: DataPoints = DataPoints()
    /// Pushes of a press (PROTOCOL.md 8.8; Push.swift). Default: none.
    public var push: Push = Push()
    /// The Tuya cloud licence (PROTOCOL.md 9; CloudProfile.swift). Default: none (never joins).
    public var cloud: Cloud?
    /// The file this profile was loaded from (absent when parsed from a string without a name).
    public var sourcePath: String?
    /// Fields the loader read but ignored because they do not apply (an `answerDelay` with
    /// policy `ignore`, ...), in file order. Empty for a profile built in code.
    public var warnings: [ProfileWarning] = []

    public init(
        identity: Identity,
        capabilities: Capabilities = Capabilities(),
        behaviour: Behaviour = Behaviour(),
        timers: Timers = Timers(),
        camera: CameraSource = .testPattern,
        security: SecurityMode = .plain,
        topics: TopicTemplates = TopicTemplates(),
        broker: Broker = Broker(),
        sourcePath: String? = nil
    ) {
        self.identity = identity
        self.capabilities = capabilities
        self.behaviour = behaviour
        self.timers = timers
        self.camera = camera
        self.security = security
        self.topics = topics
        self.broker = broker
        self.sourcePath = sourcePath
    }
}

// MARK: - Identity

extension DeviceProfile {
    /// Who the device is (PROTOCOL.md 1). `devId` may hold an `{index}` placeholder in a fleet profile
    /// (see `instance(index:)`).
    public struct Identity: Sendable, Equatable {
        /// The device id: MQTT client id, `curId`/`targetId` of its calls, part of its topics.
        public var devId: String
        /// 16 ASCII characters, used as their 16 bytes (AES-128 key of pv2.2/pv2.3, part of the P2P auth).
        public var localKey: String
        /// The P2P password that, with `localKey`, keys the 302 `auth` HMAC (PROTOCOL.md 4).
        public var p2pPassword: String
        /// A human-readable name (defaults to the devId).
        public var name: String
        /// Product category sent in `extra.category` and the probe answer (e.g. `sp_dpsxj`).
        public var category: String
        /// Optional product id, informational.
        public var productId: String?

        public init(
            devId: String, localKey: String, p2pPassword: String, name: String? = nil,
            category: String = "sp_dpsxj", productId: String? = nil
        ) {
            self.devId = devId
            self.localKey = localKey
            self.p2pPassword = p2pPassword
            self.name = name ?? devId
            self.category = category
            self.productId = productId
        }

        /// The localKey as the 16 key bytes.
        public var localKeyBytes: [UInt8] { Array(localKey.utf8) }
    }
}

// MARK: - Capabilities

extension DeviceProfile {
    /// What the device can do (PROTOCOL.md 3 `extra`, 4 media, 5 probe).
    public struct Capabilities: Sendable, Equatable {
        /// `extra.channelType` values a `call` may carry; others are refused with `invalid_params`.
        public var channelTypes: [ChannelType]
        /// Call types the device accepts and can place.
        public var callTypes: [CallType]
        /// A screen that shows the caller (the app's video and audio are received).
        public var twoWay: Bool
        /// Whether an app may open a media link without a call (PROTOCOL.md 4).
        public var liveView: Bool
        /// At most this many live-view links (links without an answered call) at once; the next
        /// live-view offer is refused with `disconnect`. An answered call's link never counts.
        public var liveViewLimit: Int = 4
        /// The video the device sends; nil for a device without a camera.
        public var video: Video?
        /// The audio the device sends; nil for a device without a microphone.
        public var audio: Audio?

        public init(
            channelTypes: [ChannelType] = [.audio, .video, .audioVideo],
            callTypes: [CallType] = [.oneToOne, .oneToMore, .oneToMoreSpecial],
            twoWay: Bool = true,
            liveView: Bool = false,
            video: Video? = Video(),
            audio: Audio? = Audio()
        ) {
            self.channelTypes = channelTypes
            self.callTypes = callTypes
            self.twoWay = twoWay
            self.liveView = liveView
            self.video = video
            self.audio = audio
        }

        /// The PROTOCOL.md 5 bit mask, derived from the other fields: audio 1, video 2, two-way 4.
        public var rtcCapability: RTCCapability {
            var mask: RTCCapability = []
            if audio != nil { mask.insert(.audio) }
            if video != nil { mask.insert(.video) }
            if twoWay { mask.insert(.twoWay) }
            return mask
        }

        /// The probe's `support`: true exactly when the video and two-way bits are both set.
        public var supportsTwoWayVideo: Bool { rtcCapability.isSuperset(of: [.video, .twoWay]) }
    }

    /// `rtcCapability` (PROTOCOL.md 5): the wire's bit mask.
    public typealias RTCCapability = IPCWire.RTCCapability

    public enum VideoCodec: String, Sendable, CaseIterable, Hashable {
        case h264 = "H264"
        /// H.265 in fragmented MP4 over the `fmp4Stream` data channel (PROTOCOL.md 7).
        case h265 = "H265"
    }

    public enum AudioCodec: String, Sendable, CaseIterable, Hashable {
        case pcma = "PCMA"
        case opus = "OPUS"
    }

    /// One video stream: `stream_type` 0 is `main`, 1 is `sub` (PROTOCOL.md 4).
    public typealias StreamFormat = VideoStreamFormat
}

extension VideoStreamFormat {
    public static let defaultMain = VideoStreamFormat(width: 1280, height: 720, fps: 30)

    /// The sub stream used when a profile gives none: half the main size (kept even) at up to
    /// 15 fps, or the main stream itself when half would be below the minimum size.
    public static func defaultSub(for main: VideoStreamFormat) -> VideoStreamFormat {
        let w = (main.width / 2) & ~1
        let h = (main.height / 2) & ~1
        let fps = min(main.fps, 15)
        if w < Limits.width.lowerBound || h < Limits.height.lowerBound {
            return VideoStreamFormat(width: main.width, height: main.height, fps: fps)
        }
        return VideoStreamFormat(width: w, height: h, fps: fps)
    }

    /// Bounds a profile may use. Width at least 64: the latency stamp has 64 cells (PROTOCOL.md 6).
    public enum Limits {
        public static let width = 64...3840
        public static let height = 16...2160
        public static let fps = 1...60
    }
}

extension DeviceProfile {
    public struct Video: Sendable, Equatable {
        public var codecs: [VideoCodec]
        public var main: StreamFormat
        public var sub: StreamFormat
        public init(
            codecs: [VideoCodec] = [.h264],
            main: StreamFormat = .defaultMain,
            sub: StreamFormat? = nil
        ) {
            self.codecs = codecs
            self.main = main
            self.sub = sub ?? .defaultSub(for: main)
        }

        /// The stream for a 302 `stream_type` (0 main, 1 sub); nil for any other value.
        public func stream(type: Int) -> StreamFormat? {
            switch type {
            case 0: main
            case 1: sub
            default: nil
            }
        }
    }

    public struct Audio: Sendable, Equatable {
        public var codecs: [AudioCodec]
        public init(codecs: [AudioCodec] = [.pcma, .opus]) { self.codecs = codecs }
    }
}

// MARK: - Behaviour

extension DeviceProfile {
    /// What the device does when a call comes in (PROTOCOL.md 3.1 step 3).
    public enum AnswerPolicy: Sendable, Equatable, CustomStringConvertible {
        /// Ring, then answer after this many seconds (0: at once, after the `ring`).
        case answer(afterSeconds: Double)
        /// Ring, then reject at once.
        case reject
        /// Ring, then reject after this many seconds (`answerPolicy: reject` with `answerDelay`):
        /// the owner declines on the screen a moment after it rings.
        case rejectAfter(seconds: Double)
        /// Ring and stay silent until the caller gives up (the deadline sends `not_answered`).
        case ignore
        /// Reply `busy` as if in another call.
        case busy
        /// Ring and wait for an operator (control API / console).
        case manual

        /// The YAML spelling of the policy.
        public var name: String {
            switch self {
            case .answer: "answer"
            case .reject, .rejectAfter: "reject"
            case .ignore: "ignore"
            case .busy: "busy"
            case .manual: "manual"
            }
        }

        public static let names = ["answer", "reject", "ignore", "busy", "manual"]

        public var description: String {
            if case .answer(let delay) = self { return "answer after \(formatSeconds(delay))" }
            if case .rejectAfter(let delay) = self { return "reject after \(formatSeconds(delay))" }
            return name
        }
    }

    public struct Behaviour: Sendable, Equatable {
        public var answerPolicy: AnswerPolicy
        /// App user ids the device calls when its button is pressed (PROTOCOL.md 3.2 step 1).
        public var household: [String]
        /// Call type of an outgoing call.
        public var callType: CallType
        /// `extra.channelType` of an outgoing call.
        public var channelType: ChannelType
        /// Seconds from an outgoing `call` to its deadline (`timeout` on the wire is now + this).
        public var callTimeout: Double

        public init(
            answerPolicy: AnswerPolicy = .answer(afterSeconds: 1),
            household: [String] = [],
            callType: CallType = .oneToOne,
            channelType: ChannelType = .audioVideo,
            callTimeout: Double = 30
        ) {
            self.answerPolicy = answerPolicy
            self.household = household
            self.callType = callType
            self.channelType = channelType
            self.callTimeout = callTimeout
        }
    }
}

// MARK: - Timers

extension DeviceProfile {
    /// Call timers in seconds (PROTOCOL.md 3.3).
    public struct Timers: Sendable, Equatable {
        public var heartbeatInterval: Double
        public var heartbeatTimeout: Double
        public var connectTimeout: Double
        public init(heartbeatInterval: Double = 10, heartbeatTimeout: Double = 30, connectTimeout: Double = 20) {
            self.heartbeatInterval = heartbeatInterval
            self.heartbeatTimeout = heartbeatTimeout
            self.connectTimeout = connectTimeout
        }
    }
}

// MARK: - Camera

extension DeviceProfile {
    /// Where the video comes from.
    public enum CameraSource: Sendable, Equatable, CustomStringConvertible {
        /// The synthetic pattern with a latency stamp (PROTOCOL.md 6), at the main stream's size and rate.
        case testPattern
        /// A V4L2 capture device.
        case v4l2(V4L2Camera)
        /// An H.264 or H.265 Annex-B file played in a loop (H.265: for the `fmp4Stream` channel only).
        case clip(ClipFile)

        /// The YAML spelling of the camera type.
        public var typeName: String {
            switch self {
            case .testPattern: "testPattern"
            case .v4l2: "v4l2"
            case .clip: "clip"
            }
        }

        public static let typeNames = ["testPattern", "v4l2", "clip"]

        public var description: String {
            switch self {
            case .testPattern: "testPattern"
            case .v4l2(let c): "v4l2 \(c.device) \(c.format.rawValue) \(c.width)x\(c.height)@\(c.fps)"
            case .clip(let c): "clip \(c.path)@\(c.fps)"
            }
        }
    }

    public enum PixelFormat: String, Sendable, CaseIterable, Hashable {
        case mjpeg
        case yuyv
        case h264
        /// H.265 passed through to the `fmp4Stream` data channel (PROTOCOL.md 7); needs `H265` in
        /// `capabilities.video.codecs`.
        case h265
        /// Let the camera layer pick the best format the device offers.
        case auto
    }

    public struct V4L2Camera: Sendable, Equatable {
        /// A device path (`/dev/video0`) or a card name as V4L2 reports it.
        public var device: String
        public var format: PixelFormat
        /// Capture size and rate (default: the main stream's); the pipeline scales to each stream.
        public var width: Int
        public var height: Int
        public var fps: Int
        public init(device: String, format: PixelFormat = .auto, width: Int, height: Int, fps: Int) {
            self.device = device
            self.format = format
            self.width = width
            self.height = height
            self.fps = fps
        }
        /// True when `device` is a path rather than a card name.
        public var isPath: Bool { device.hasPrefix("/") }
    }

    public struct ClipFile: Sendable, Equatable {
        /// Absolute path of the H.264 or H.265 Annex-B file (a relative path in YAML is relative to the profile).
        public var path: String
        public var fps: Int
        public init(path: String, fps: Int) {
            self.path = path
            self.fps = fps
        }
    }
}

// MARK: - Security

extension DeviceProfile {
    /// Payload protection on the in/out topics (PROTOCOL.md 2.1): the wire's mode.
    public typealias SecurityMode = IPCWire.SecurityMode
}

// MARK: - Broker

extension DeviceProfile {
    /// Where the device connects. No `url`: `ipcemu run` starts a private broker (DESIGN.md).
    public struct Broker: Sendable, Equatable {
        public var url: BrokerURL?
        /// MQTT username; nil means the devId. May contain `{devId}`.
        public var username: String?
        public var password: String?
        /// Absolute paths of TLS files (mqtts only).
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        /// MQTT keep-alive in seconds.
        public var keepAlive: Int

        public init(
            url: BrokerURL? = nil, username: String? = nil, password: String? = nil,
            caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil, keepAlive: Int = 30
        ) {
            self.url = url
            self.username = username
            self.password = password
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
            self.keepAlive = keepAlive
        }

        /// The username for a device: the template with `{devId}` filled in, or the devId itself.
        public func username(for devId: String) -> String {
            guard let username else { return devId }
            return username.replacingOccurrences(of: "{devId}", with: devId)
        }

        public static let keepAliveRange = 5...65535
    }

    /// `mqtt://host[:port]` or `mqtts://host[:port]`.
    public struct BrokerURL: Sendable, Equatable, CustomStringConvertible {
        public var tls: Bool
        public var host: String
        public var port: Int
        public init(tls: Bool, host: String, port: Int? = nil) {
            self.tls = tls
            self.host = host
            self.port = port ?? (tls ? 8883 : 1883)
        }
        public var description: String {
            let h = host.contains(":") ? "[\(host)]" : host
            return "\(tls ? "mqtts" : "mqtt")://\(h):\(port)"
        }
    }
}

// MARK: - Conveniences

extension DeviceProfile {
    /// The device's own topics.
    public var resolvedTopics: ResolvedTopics { topics.resolved(devId: identity.devId) }

    /// The topics of any device id under this profile's templates.
    public func topics(for devId: String) -> ResolvedTopics { topics.resolved(devId: devId) }

    /// PROTOCOL.md 5 `rtcCapability` as sent.
    public var rtcCapability: Int { capabilities.rtcCapability.rawValue }

    /// PROTOCOL.md 5 `support`.
    public var supportsTwoWayVideo: Bool { capabilities.supportsTwoWayVideo }

    /// The MQTT username this device logs in with.
    public var brokerUsername: String { broker.username(for: identity.devId) }

    /// The device's capabilities as its retained meta (PROTOCOL.md 5); `answering(query)` turns it
    /// into the answer to a 309 probe. A device without video reports no codecs and no streams.
    /// It carries `skill` (8.7) and, for a low-power device, `"awake":true` (`meta(awake:)` for
    /// the meta of a sleeping device).
    public var meta: AbilityAnswer { meta(awake: true) }

    /// The meta with the device's awake state (PROTOCOL.md 8.4: a low-power device's retained meta
    /// carries `"awake":false` asleep and `"awake":true` awake). A device that never sleeps leaves
    /// `awake` out, whatever is passed.
    public func meta(awake: Bool) -> AbilityAnswer {
        let caps = capabilities
        var streams: [StreamAbility] = []
        if let video = caps.video {
            streams = [
                StreamAbility(streamType: .main, width: video.main.width, height: video.main.height, fps: video.main.fps),
                StreamAbility(streamType: .sub, width: video.sub.width, height: video.sub.height, fps: video.sub.fps),
            ]
        }
        return AbilityAnswer(
            kind: .meta, devId: identity.devId, rtcCapability: caps.rtcCapability,
            category: identity.category, channelTypes: caps.channelTypes, callTypes: caps.callTypes,
            liveView: caps.liveView, videoCodecs: caps.video?.codecs.map(\.rawValue) ?? [],
            streams: streams, audioCodecs: caps.audio?.codecs.map(\.rawValue) ?? [],
            skill: skill, awake: power.lowPower ? awake : nil)
    }

    /// One line for logs and `ipcemu profile check`.
    public var summary: String {
        var parts = [
            "devId \(identity.devId)\(isTemplate ? " (fleet template)" : "")",
            "category \(identity.category)",
            "rtcCapability \(rtcCapability)",
        ]
        if let video = capabilities.video { parts.append("video \(video.main)/\(video.sub)") }
        parts.append("camera \(camera)")
        parts.append("answerPolicy \(behaviour.answerPolicy)")
        parts.append("security \(security.rawValue)")
        if doorbell.kind != .screenIPC { parts.append("doorbell \(doorbell.kind.rawValue)") }
        if power.lowPower { parts.append("low power (sleeps after \(formatSeconds(power.sleepAfter)))") }
        if cloud != nil { parts.append("cloud") }
        return parts.joined(separator: ", ")
    }
}

func formatSeconds(_ s: Double) -> String {
    if s == s.rounded(), abs(s) < 1e9 { return "\(Int(s)) s" }
    return "\(s) s"
}
