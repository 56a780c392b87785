// The profile's `doorbell` section (PROTOCOL.md 8): what a press does, how long a doorbell call
// rings, and the left messages of 8.5.

extension DeviceProfile {
    /// How the device behaves as a doorbell (PROTOCOL.md 8). Defaults are the screen IPC's: a press
    /// places a §3 call, as before section 8.
    public struct Doorbell: Sendable, Equatable {
        /// `doorbell.kind` (PROTOCOL.md 8): also the `etype` of a protocol 43 press.
        public enum Kind: String, Sendable, CaseIterable, Hashable {
            /// "IPC with screen": a press places a §3 call (the default).
            case screenIPC = "screen_ipc"
            /// Mains powered doorbell: a press sends protocol 43, always awake.
            case acDoorbell = "ac_doorbell"
            /// Battery doorbell: a press sends protocol 43, sleeps (PROTOCOL.md 8.4).
            case doorbell = "doorbell"

            /// True for the kinds whose press is a protocol 43 message and a `video_doorbell` call
            /// (8.1, 8.2), false for `screen_ipc`.
            public var isTuyaDoorbell: Bool { self != .screenIPC }
        }

        public var kind: Kind
        /// Seconds a doorbell call rings before `timeout` (8.2; default 25).
        public var ringTimeout: Double
        /// Whether a press after a `timeout` may leave a message (8.5; default false).
        public var messages: Bool
        /// Seconds after a `timeout` in which a press records a message (8.5; default 15).
        public var messageWindow: Double
        /// Whole seconds of camera a message holds (8.5; default 10, at most 10).
        public var messageSeconds: Int

        public static let defaultRingTimeout = 25.0
        public static let defaultMessageWindow = 15.0
        public static let defaultMessageSeconds = 10
        /// PROTOCOL.md 8.5: "at most 10".
        public static let messageSecondsRange = 1...10
        /// Longest `ringTimeout` and `messageWindow` a profile may give (seconds).
        public static let maxSeconds = 600.0

        public init(
            kind: Kind = .screenIPC, ringTimeout: Double = defaultRingTimeout, messages: Bool = false,
            messageWindow: Double = defaultMessageWindow, messageSeconds: Int = defaultMessageSeconds
        ) {
            self.kind = kind
            self.ringTimeout = ringTimeout
            self.messages = messages
            self.messageWindow = messageWindow
            self.messageSeconds = messageSeconds
        }

        /// `ringTimeout` in milliseconds (the engines' clock unit).
        public var ringTimeoutMs: Int64 { milliseconds(ringTimeout) }
        /// `messageWindow` in milliseconds.
        public var messageWindowMs: Int64 { milliseconds(messageWindow) }
    }
}

/// Seconds as whole milliseconds, rounded; saturating (profile values are range-checked already).
func milliseconds(_ seconds: Double) -> Int64 {
    let ms = (seconds * 1000).rounded()
    guard ms.isFinite else { return 0 }
    if ms >= 9.2e18 { return .max }
    if ms <= 0 { return 0 }
    return Int64(ms)
}

// MARK: - Parsing

extension ProfileParser {
    static let doorbellKeys = ["kind", "ringTimeout", "messages", "messageWindow", "messageSeconds"]

    func doorbell(_ top: MappingReader, capabilities: Profile.Capabilities?) -> Profile.Doorbell? {
        guard let node = top["doorbell"] else { return Profile.Doorbell() }
        guard let m = diagnostics.mapping(node, at: "doorbell", allowed: Self.doorbellKeys) else { return nil }
        let before = diagnostics.errors.count
        let kind = m.oneOf("kind", Profile.Doorbell.Kind.allCases.map(\.rawValue)).flatMap(Profile.Doorbell.Kind.init(rawValue:))
        let ringTimeout = m.seconds("ringTimeout", max: Profile.Doorbell.maxSeconds)
        let messages = m.bool("messages")
        let messageWindow = m.seconds("messageWindow", max: Profile.Doorbell.maxSeconds)
        let messageSeconds = m.int("messageSeconds", in: Profile.Doorbell.messageSecondsRange)
        guard diagnostics.errors.count == before else { return nil }

        let result = Profile.Doorbell(
            kind: kind ?? .screenIPC, ringTimeout: ringTimeout ?? Profile.Doorbell.defaultRingTimeout,
            messages: messages ?? false, messageWindow: messageWindow ?? Profile.Doorbell.defaultMessageWindow,
            messageSeconds: messageSeconds ?? Profile.Doorbell.defaultMessageSeconds)

        // The fields of 8.2 and 8.5 belong to the Tuya doorbell kinds; a screen IPC rings as §3 says.
        if !result.kind.isTuyaDoorbell {
            for key in ["ringTimeout", "messages", "messageWindow", "messageSeconds"] where m.has(key) {
                diagnostics.warn(at: m[key]?.mark, field: m.field(key),
                                 "\(key) applies to doorbell.kind ac_doorbell or doorbell, not screen_ipc (a screen IPC rings for behaviour.callTimeout): ignored")
            }
            return result
        }
        if result.messages {
            // 8.5: a message is the camera's video.
            if let capabilities, capabilities.video == nil {
                diagnostics.add(.inconsistent, at: m["messages"]?.mark ?? m.mark, field: m.field("messages"),
                                "a left message records the camera, but capabilities.video is none")
                return nil
            }
        } else {
            for key in ["messageWindow", "messageSeconds"] where m.has(key) {
                diagnostics.warn(at: m[key]?.mark, field: m.field(key),
                                 "\(key) applies when doorbell.messages is true: ignored")
            }
        }
        return result
    }
}
