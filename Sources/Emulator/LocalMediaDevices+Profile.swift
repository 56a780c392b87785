import DeviceProfile
import Foundation
import WebRTCLink

extension LocalMediaDevices {
    /// The profile's `display` and `audio` sections for one link (PROTOCOL.md 4: a screen IPC
    /// shows the caller). A recording's path gets the device and session filled in; a file that
    /// is already there (the app reconnected) is not overwritten: `-2`, `-3` ... go before the
    /// extension.
    init(profile: DeviceProfile, sessionId: String) {
        let display: VideoDisplay
        switch profile.display {
        case .none: display = .none
        case .window(let sink, let xDisplay): display = .window(sink: sink, xDisplay: xDisplay)
        case .kms(let connector, let driver): display = .kms(connector: connector, driver: driver)
        case .file(let recording):
            let path = Self.unusedPath(recording.path(devId: profile.identity.devId, sessionId: sessionId))
            display = .file(path: path, reencode: recording.reencode)
        }
        let playback: AudioPlayback
        switch profile.audio.playback {
        case .none: playback = .none
        case .alsa(let device): playback = .alsa(device: device)
        }
        let source: AudioSource
        switch profile.audio.source {
        case .tone: source = .tone
        case .alsa(let device): source = .alsa(device: device)
        }
        self.init(display: display, playback: playback, audioSource: source)
    }

    static func unusedPath(_ path: String) -> String {
        guard FileManager.default.fileExists(atPath: path) else { return path }
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        let stem = url.deletingPathExtension().path
        for n in 2...10_000 {
            let candidate = "\(stem)-\(n).\(ext)"
            if !FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return path
    }
}
