import Foundation

/// The device's `skill` (PROTOCOL.md 8.7): a JSON object carried as a string in the 309 answer and
/// the retained meta (and uploaded to the cloud, 9.3), in the shape go2rtc's Tuya client reads:
/// `{"webrtc":48,"lowPower":1,"audios":[{"channels":1,"dataBit":16,"codecType":106,"sampleRate":8000}],
///   "videos":[{"streamType":2,"codecType":2,"width":1280,"height":720,"sampleRate":90000,"profileId":"42e01f"}]}`.
public struct DeviceSkill: Codable, Sendable, Equatable, Hashable {
    /// Bit flags: `speakerBit` (the device plays the app's audio, 312 `speaker`), `clarityBit` (it
    /// switches between main and sub, 312 `resolution`).
    public var webrtc: Int
    /// 1 for a low-power (sleeping) device; nil, and left out of the JSON, when 0, "as go2rtc's own
    /// type does".
    public var lowPower: Int?
    public var audios: [Audio]
    public var videos: [Video]

    public static let speakerBit = 1 << 4
    public static let clarityBit = 1 << 5

    public struct Audio: Codable, Sendable, Equatable, Hashable {
        public var channels: Int
        public var dataBit: Int
        /// 101 PCM, 105 PCMU, 106 PCMA.
        public var codecType: Int
        public var sampleRate: Int

        public init(channels: Int, dataBit: Int, codecType: Int, sampleRate: Int) {
            self.channels = channels
            self.dataBit = dataBit
            self.codecType = codecType
            self.sampleRate = sampleRate
        }

        public static let pcm = 101
        public static let pcmu = 105
        public static let pcma = 106
        /// G.711 A-law, mono, 8 kHz (what the device's PCMA track carries).
        public static let g711a = Audio(channels: 1, dataBit: 16, codecType: pcma, sampleRate: 8000)
    }

    public struct Video: Codable, Sendable, Equatable, Hashable {
        /// 2 main (hd), 4 sub (sd).
        public var streamType: Int
        /// 2 H.264, 4 H.265.
        public var codecType: Int
        public var width: Int
        public var height: Int
        /// The RTP clock rate, 90000.
        public var sampleRate: Int
        /// The codec profile as a string (H.264: the SDP profile-level-id).
        public var profileId: String

        public init(streamType: Int, codecType: Int, width: Int, height: Int, sampleRate: Int = 90_000, profileId: String) {
            self.streamType = streamType
            self.codecType = codecType
            self.width = width
            self.height = height
            self.sampleRate = sampleRate
            self.profileId = profileId
        }

        public static let mainStream = 2
        public static let subStream = 4
        public static let h264 = 2
        public static let h265 = 4
        /// Constrained baseline, level 3.1: what the device's SDP answers state (WebRTCAnswerer).
        public static let h264ProfileId = "42e01f"
        /// Main profile (general_profile_idc 1).
        public static let h265ProfileId = "1"
    }

    public init(webrtc: Int, lowPower: Bool, audios: [Audio], videos: [Video]) {
        self.webrtc = webrtc
        self.lowPower = lowPower ? 1 : nil
        self.audios = audios
        self.videos = videos
    }

    public var isLowPower: Bool { (lowPower ?? 0) != 0 }

    /// Compact JSON with sorted keys (stable for tests and signatures).
    public var jsonString: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a skill string; `field` names it in the error (`data.skill`).
    public static func decode(_ text: String, field: String) throws(WireError) -> DeviceSkill {
        do {
            var skill = try JSONDecoder().decode(DeviceSkill.self, from: Data(text.utf8))
            if skill.lowPower == 0 { skill.lowPower = nil }
            return skill
        } catch {
            throw .invalidValue(field: field, value: "'\(text.prefix(80))'",
                                expected: "a skill JSON object (webrtc, audios, videos)")
        }
    }
}
