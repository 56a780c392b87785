import IPCWire

// PROTOCOL.md 8.7: the device's skill, built from its profile.

extension DeviceProfile {
    /// The skill JSON of PROTOCOL.md 8.7, built from the capabilities and `power`:
    /// - `webrtc`: the speaker bit when the device plays the app's audio (audio and `twoWay`), the
    ///   clarity bit when it has video (main and sub to switch between, 312 `resolution`);
    /// - `lowPower`: 1 for `power.lowPower`, left out otherwise;
    /// - `audios`: PCMA as G.711 A-law mono 8 kHz (codecType 106); OPUS has no skill code and is
    ///   left out;
    /// - `videos`: main (streamType 2) and sub (4) at their sizes, 90 kHz; codecType 4 (H.265)
    ///   when the profile lists H265 and not H264 (its video is H.265 only), else 2 (H.264),
    ///   profileId `42e01f` (H.264 constrained baseline 3.1, as the device's SDP states) or `1`
    ///   (H.265 Main).
    public var skill: DeviceSkill {
        var webrtc = 0
        if capabilities.audio != nil && capabilities.twoWay { webrtc |= DeviceSkill.speakerBit }
        if capabilities.video != nil { webrtc |= DeviceSkill.clarityBit }
        var audios: [DeviceSkill.Audio] = []
        for codec in capabilities.audio?.codecs ?? [] {
            switch codec {
            case .pcma: audios.append(.g711a)
            case .opus: break
            }
        }
        var videos: [DeviceSkill.Video] = []
        if let video = capabilities.video {
            let hevcOnly = video.codecs.contains(.h265) && !video.codecs.contains(.h264)
            let codecType = hevcOnly ? DeviceSkill.Video.h265 : DeviceSkill.Video.h264
            let profileId = hevcOnly ? DeviceSkill.Video.h265ProfileId : DeviceSkill.Video.h264ProfileId
            videos = [
                DeviceSkill.Video(streamType: DeviceSkill.Video.mainStream, codecType: codecType,
                                  width: video.main.width, height: video.main.height, profileId: profileId),
                DeviceSkill.Video(streamType: DeviceSkill.Video.subStream, codecType: codecType,
                                  width: video.sub.width, height: video.sub.height, profileId: profileId),
            ]
        }
        return DeviceSkill(webrtc: webrtc, lowPower: power.lowPower, audios: audios, videos: videos)
    }
}
