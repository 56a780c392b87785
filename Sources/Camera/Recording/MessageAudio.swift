/// The sound of a left message (PROTOCOL.md 8.5: "the camera (and microphone, if any)"): what the
/// device's links send, a test tone or an ALSA microphone, encoded to AAC; or none.
public enum MessageAudio: Sendable, Equatable, CustomStringConvertible {
    /// A video-only message (a profile without a microphone, or no AAC encoder installed).
    case none
    /// The 440 Hz tone the links send when the profile has no microphone device.
    case tone
    /// An ALSA capture device ("default", "hw:1,0"), as the profile's `audio.source` names it.
    case alsa(device: String)

    public var description: String {
        switch self {
        case .none: return "no audio"
        case .tone: return "440 Hz tone"
        case .alsa(let device): return "ALSA '\(device)'"
        }
    }

    /// The AAC encoders this looks for, best first: `fdkaacenc` (not in Debian), `voaacenc`
    /// (gst-plugins-bad) and `avenc_aac` (gst-libav; both ship with Debian 12's GStreamer 1.22).
    public static let aacEncoderCandidates = ["fdkaacenc", "voaacenc", "avenc_aac"]

    /// The first AAC encoder installed, or nil (then messages are recorded without sound).
    public static var aacEncoder: String? {
        aacEncoderCandidates.first { GStreamerPipeline.hasElements([$0]) }
    }

    /// The gst-launch source elements, live, ending after `seconds` (buffers of 10 ms), or nil for
    /// `.none`.
    func sourceDescription(seconds: Int) -> String? {
        let buffers = max(1, seconds) * 100
        switch self {
        case .none:
            return nil
        case .tone:
            return "audiotestsrc name=audio is-live=true wave=sine freq=440 volume=0.2 samplesperbuffer=480 num-buffers=\(buffers)"
        case .alsa(let device):
            return "alsasrc name=audio provide-clock=false latency-time=10000 buffer-time=200000 num-buffers=\(buffers)"
                + " device=\(MessageRecorder.quoted(device))"
        }
    }
}
