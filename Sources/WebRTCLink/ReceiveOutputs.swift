// Where the device shows and plays what the app sends (a screen IPC shows the caller), and where
// its own voice comes from: the profile's `display` and `audio` sections as the media layer sees
// them. Each output is a branch split off the receive path by a tee and guarded in C
// (cgst_display.c): a sink that fails (a window closed by hand, a full disk, a sound card pulled)
// stops its branch only, never the call.
import CGstWebRTC
import Foundation

/// Where the app's video goes besides being counted.
public enum VideoDisplay: Sendable, Hashable {
    /// Counted only (and kept for snapshots).
    case none
    /// A desktop window: `sink` is the GStreamer element (`ximagesink` by default) on the X display
    /// `xDisplay` (nil: `$DISPLAY`).
    case window(sink: String, xDisplay: String?)
    /// Full screen without a desktop (a Raspberry Pi's HDMI): GStreamer's `kmssink`.
    case kms(connector: Int?, driver: String?)
    /// Recorded to a file (`.mkv` Matroska, `.mp4` MP4). H.264 is written as it came unless
    /// `reencode` (then decoded and encoded again with x264); VP8 goes into Matroska as it came.
    case file(path: String, reencode: Bool)
}

/// Where the app's audio goes besides being counted.
public enum AudioPlayback: Sendable, Hashable {
    case none
    /// An ALSA PCM by name (`default`, `plughw:CARD=Device,DEV=0`, ...).
    case alsa(device: String)
}

/// The device's own sound.
public enum AudioSource: Sendable, Hashable {
    /// A 440 Hz test tone.
    case tone
    /// An ALSA capture PCM by name.
    case alsa(device: String)
}

/// The device's screen and sound for one link.
public struct LocalMediaDevices: Sendable, Hashable {
    public var display: VideoDisplay
    public var playback: AudioPlayback
    public var audioSource: AudioSource

    public init(display: VideoDisplay = .none, playback: AudioPlayback = .none, audioSource: AudioSource = .tone) {
        self.display = display
        self.playback = playback
        self.audioSource = audioSource
    }
}

/// A receive branch with its outputs: the gst-launch description, the entry elements of the output
/// branches in it (each guarded), and the properties to set on named children (paths and device
/// names never go through the description's quoting).
struct ReceiveBranchPlan {
    var description: String
    var entries: [String] = []
    var properties: [(element: String, property: String, value: String)] = []
    /// Outputs left out because their sink cannot open, with why.
    var problems: [String] = []
    /// The child process drawing the window (`display: window`); finished once the bin has stopped.
    var window: WindowProcess?
}

enum OutputDescriptions {
    static let displayEntry = "display-entry"
    static let playbackEntry = "playback-entry"
    /// The `volume` before the speaker's sink: muted while the speaker is off (PROTOCOL.md 8.6).
    static let playbackVolume = "playback-volume"

    /// True for a bus message source that belongs to an output branch (its errors stop that branch
    /// only).
    static func isOutputElement(_ name: String) -> Bool {
        name.hasPrefix("display-") || name.hasPrefix("playback-")
    }

    /// The receive branch for a webrtcbin src pad with the device's outputs; nil when the encoding
    /// is not one we decode.
    /// Whether received video of `encoding` goes to a display of the device's (else it is counted only).
    static func showsVideo(encoding: String, devices: LocalMediaDevices) -> Bool {
        let codec = encoding.uppercased()
        return devices.display != .none && (codec == "H264" || codec == "VP8")
    }

    /// `windowEnded` hears when a window's child process ends before the link does.
    static func receiveBranch(
        media: String, encoding: String, devices: LocalMediaDevices,
        windowEnded: @escaping @Sendable (String) -> Void = { _ in }
    ) -> ReceiveBranchPlan? {
        switch (media, encoding.uppercased()) {
        case ("video", let codec) where showsVideo(encoding: codec, devices: devices):
            return videoBranch(codec: codec, display: devices.display, windowEnded: windowEnded)
        case ("audio", let codec):
            guard case .alsa(let device) = devices.playback, let decode = audioDecoder(codec) else { return nil }
            var plan = ReceiveBranchPlan(
                description: "queue ! \(decode) ! tee name=soundtap allow-not-linked=true"
                    + " ! queue ! appsink name=sound sync=false async=false max-buffers=4 drop=true")
            // S16LE: what nearly every sound card takes; rate and channels are left to the device.
            let sink = "volume name=\(playbackVolume) ! audioconvert ! audioresample ! audio/x-raw,format=S16LE"
                + " ! alsasink name=playback-sink sync=false async=false"
            if let why = opens(sink + " device=\(quoted(device))") {
                plan.problems.append("audio playback on ALSA '\(device)': \(why)")
                return plan
            }
            plan.description += "  soundtap. ! queue name=\(playbackEntry) ! \(sink)"
            plan.entries.append(playbackEntry)
            plan.properties.append(("playback-sink", "device", device))
            return plan
        default:
            return nil
        }
    }

    private static func audioDecoder(_ codec: String) -> String? {
        switch codec {
        case "PCMA": "rtppcmadepay ! alawdec"
        case "PCMU": "rtppcmudepay ! mulawdec"
        case "OPUS": "rtpopusdepay ! opusdec"
        default: nil
        }
    }

    private static func videoBranch(
        codec: String, display: VideoDisplay, windowEnded: @escaping @Sendable (String) -> Void
    ) -> ReceiveBranchPlan {
        let depay = codec == "H264"
            ? "rtph264depay request-keyframe=true ! h264parse ! tee name=encodedtap allow-not-linked=true ! queue ! avdec_h264 max-threads=1"
            : "rtpvp8depay ! tee name=encodedtap allow-not-linked=true ! queue ! vp8dec"
        var plan = ReceiveBranchPlan(
            description: "queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! \(depay)"
                + " ! videoconvert ! video/x-raw,format=I420 ! tee name=rawtap allow-not-linked=true"
                + " ! queue ! appsink name=frames sync=false async=false max-buffers=2 drop=true")
        let entry = "queue name=\(displayEntry) max-size-buffers=3 leaky=downstream"
        switch display {
        case .none:
            return plan
        case .window(let sink, let xDisplay):
            // Drawn by a child process (WindowProcess): never an X connection in this process.
            switch WindowProcess.start(sink: sink, xDisplay: xDisplay, ended: windowEnded) {
            case .failure(let problem):
                plan.problems.append(problem.text)
                return plan
            case .success(let window):
                plan.window = window
                plan.description += "  rawtap. ! \(entry) ! gdppay ! fdsink name=display-sink fd=\(window.input) sync=false async=false"
            }
        case .kms(let connector, let driver):
            var sink = "kmssink name=display-sink sync=false async=false"
            if let connector { sink += " connector-id=\(connector)" }
            var probe = sink
            if let driver { probe += " driver-name=\(quoted(driver))" }
            if let why = opens("videoconvert ! " + probe) {
                plan.problems.append("display kms: \(why)")
                return plan
            }
            plan.description += "  rawtap. ! \(entry) ! videoconvert ! \(sink)"
            if let driver { plan.properties.append(("display-sink", "driver-name", driver)) }
        case .file(let path, let reencode):
            if let why = writable(path) {
                plan.problems.append("display file \(path): \(why)")
                return plan
            }
            let mp4 = path.lowercased().hasSuffix(".mp4")
            let mux = mp4 ? "mp4mux name=display-mux" : "matroskamux name=display-mux"
            let sink = "filesink name=display-sink async=false"
            let recordEntry = "queue name=\(displayEntry) max-size-buffers=0 max-size-time=0 max-size-bytes=0"
            if reencode || (codec == "VP8" && mp4) {
                plan.description += "  rawtap. ! \(recordEntry) ! videoconvert ! x264enc name=display-encoder tune=zerolatency"
                    + " speed-preset=ultrafast key-int-max=60 ! h264parse ! \(mux) ! \(sink)"
            } else if codec == "H264" {
                plan.description += "  encodedtap. ! \(recordEntry) ! h264parse ! \(mux) ! \(sink)"
            } else {
                plan.description += "  encodedtap. ! \(recordEntry) ! \(mux) ! \(sink)"
            }
            plan.properties.append(("display-sink", "location", path))
        }
        plan.entries.append(displayEntry)
        return plan
    }

    /// The device's own sound, up to the encoder: a tone, or an ALSA microphone (when it opens;
    /// else the tone, and `problem` says why).
    static func audioSource(_ source: AudioSource) -> (description: String?, problem: String?) {
        switch source {
        case .tone:
            return (nil, nil)
        case .alsa(let device):
            let capture = "alsasrc name=microphone provide-clock=false device=\(quoted(device))"
            if let why = opens(capture + " ! fakesink") {
                return (nil, "microphone on ALSA '\(device)': \(why); sending the test tone")
            }
            return (capture, nil)
        }
    }

    /// nil when the sink opens; else GStreamer's reason.
    static func opens(_ description: String) -> String? {
        do { try GStreamerRuntime.start() } catch { return "\(error)" }
        var error: UnsafeMutablePointer<CChar>?
        if cgw_output_opens(description, &error) { return nil }
        guard let error else { return "the sink did not open" }
        defer { cgw_free(error) }
        return String(cString: error)
    }

    /// nil when a file can be written at `path` (its folder is made if missing).
    static func writable(_ path: String) -> String? {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            return "cannot make the folder \(folder): \(error.localizedDescription)"
        }
        return FileManager.default.isWritableFile(atPath: folder) ? nil : "the folder \(folder) is not writable"
    }

    /// A gst-launch string value: quoted, with backslashes and quotes escaped.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
