import Foundation
import Testing
@testable import DeviceProfile

/// The `display` and `audio` sections (issue 14): what loads, and each mistake with its field,
/// line and what was expected.
@Suite("Profile display and audio")
struct ScreenAndSoundProfileTests {
    @Test("left out: no display, the test tone, no playback")
    func defaults() throws {
        let p = try DeviceProfile.parse(yaml: identityLines, fileName: "/etc/ipcemu/door.yaml")
        #expect(p.display == .none)
        #expect(p.audio == DeviceProfile.Sound(source: .tone, playback: .none))
    }

    @Test("each display type and the ALSA audio load as written; a relative recording path is the profile's folder's")
    func loads() throws {
        func display(_ body: String) throws -> DeviceProfile.Display {
            try DeviceProfile.parse(yaml: identityLines + "\ndisplay:\n" + body, fileName: "/etc/ipcemu/door.yaml").display
        }
        #expect(try display("  type: none\n") == .none)
        #expect(try display("  type: window\n") == .window(sink: "ximagesink", xDisplay: nil))
        #expect(try display("  type: window\n  xDisplay: \":1\"\n") == .window(sink: "ximagesink", xDisplay: ":1"))
        #expect(try display("  type: window\n  sink: autovideosink\n") == .window(sink: "autovideosink", xDisplay: nil))
        #expect(try display("  type: kms\n  connector: 32\n  driver: vc4\n") == .kms(connector: 32, driver: "vc4"))
        #expect(try display("  type: file\n  path: rec/{devId}-{sessionId}.mkv\n")
                == .file(DeviceProfile.Recording(pathTemplate: "/etc/ipcemu/rec/{devId}-{sessionId}.mkv")))
        #expect(try display("  type: file\n  path: /tmp/a.mp4\n  reencode: true\n")
                == .file(DeviceProfile.Recording(pathTemplate: "/tmp/a.mp4", reencode: true)))
        let p = try DeviceProfile.parse(yaml: identityLines + """

            audio:
              source: alsa
              captureDevice: plughw:CARD=Device,DEV=0
              playback: alsa
              playbackDevice: default
            """)
        #expect(p.audio == DeviceProfile.Sound(source: .alsa(device: "plughw:CARD=Device,DEV=0"), playback: .alsa(device: "default")))
    }

    @Test("a recording's path gets the device and session, and nothing from outside climbs out of its folder")
    func recordingPath() {
        let r = DeviceProfile.Recording(pathTemplate: "/rec/{devId}/{sessionId}.mkv")
        #expect(r.path(devId: "door-1", sessionId: "abc.123") == "/rec/door-1/abc.123.mkv")
        #expect(r.path(devId: "door-1", sessionId: "../../etc/passwd") == "/rec/door-1/.._.._etc_passwd.mkv")
        #expect(r.path(devId: "door-1", sessionId: "..") == "/rec/door-1/_.mkv")
        #expect(r.path(devId: "door-1", sessionId: "") == "/rec/door-1/_.mkv")
    }

    static let cases: [BadCase] = [
        BadCase(name: "display without type", yaml: identityLines + "\ndisplay:\n  path: a.mkv\n",
                kind: .missingField, field: "display.type", line: 7, message: "none, window, kms, file"),
        BadCase(name: "display type unknown", yaml: identityLines + "\ndisplay:\n  type: hdmi\n",
                kind: .invalidValue, field: "display.type", line: 7, message: "expected one of none, window, kms, file, got 'hdmi'"),
        BadCase(name: "file without path", yaml: identityLines + "\ndisplay:\n  type: file\n",
                kind: .missingField, field: "display.path", line: 7, message: ".mkv or .mp4"),
        BadCase(name: "file with another extension", yaml: identityLines + "\ndisplay:\n  type: file\n  path: out.avi\n",
                kind: .invalidValue, field: "display.path", line: 8, message: "ending in .mkv (Matroska) or .mp4, got 'out.avi'"),
        BadCase(name: "file with an unknown placeholder", yaml: identityLines + "\ndisplay:\n  type: file\n  path: \"{user}.mkv\"\n",
                kind: .invalidValue, field: "display.path", line: 8, message: "{devId} and {sessionId}"),
        BadCase(name: "a key of another display type", yaml: identityLines + "\ndisplay:\n  type: window\n  connector: 3\n",
                kind: .unknownKey, field: "display.connector", line: 8, message: "window display"),
        BadCase(name: "reencode not a bool", yaml: identityLines + "\ndisplay:\n  type: file\n  path: a.mkv\n  reencode: often\n",
                kind: .wrongType, field: "display.reencode", line: 9, message: "often"),
        BadCase(name: "xDisplay with a sink that has none", yaml: identityLines + "\ndisplay:\n  type: window\n  sink: glimagesink\n  xDisplay: \":0\"\n",
                kind: .inconsistent, field: "display.xDisplay", line: 9, message: "ximagesink or xvimagesink"),
        BadCase(name: "a display on a device that is not two-way", yaml: identityLines + "\ncapabilities:\n  twoWay: false\ndisplay:\n  type: kms\n",
                kind: .inconsistent, field: "display.type", line: 9, message: "capabilities.twoWay"),
        BadCase(name: "audio source unknown", yaml: identityLines + "\naudio:\n  source: pulse\n",
                kind: .invalidValue, field: "audio.source", line: 7, message: "expected one of tone, alsa, got 'pulse'"),
        BadCase(name: "alsa source without a device", yaml: identityLines + "\naudio:\n  source: alsa\n",
                kind: .missingField, field: "audio.captureDevice", line: 7, message: "with source alsa"),
        BadCase(name: "a playback device without alsa playback", yaml: identityLines + "\naudio:\n  playbackDevice: default\n",
                kind: .inconsistent, field: "audio.playbackDevice", line: 7, message: "goes with playback: alsa"),
        BadCase(name: "an empty capture device", yaml: identityLines + "\naudio:\n  source: alsa\n  captureDevice: \"\"\n",
                kind: .invalidValue, field: "audio.captureDevice", line: 8, message: "empty"),
        BadCase(name: "ALSA audio on a device without audio", yaml: identityLines + "\ncapabilities:\n  audio: none\naudio:\n  playback: alsa\n  playbackDevice: default\n",
                kind: .inconsistent, field: "audio.playback", line: 9, message: "capabilities.audio is none"),
        BadCase(name: "an unknown audio key", yaml: identityLines + "\naudio:\n  speaker: default\n",
                kind: .unknownKey, field: "audio.speaker", line: 7, message: "unknown key 'speaker'"),
    ]

    @Test("reports the first mistake with its field, line and what was expected", arguments: cases)
    func bad(_ c: BadCase) {
        do {
            let profile = try DeviceProfile.parse(yaml: c.yaml, fileName: "bad.yaml")
            Issue.record("parsed without error: \(profile.summary)")
        } catch {
            #expect(error.kind == c.kind, "\(error)")
            #expect(error.field == c.field, "\(error)")
            if let line = c.line { #expect(error.line == line, "\(error)") }
            #expect(error.message.contains(c.message), "\(error)")
        }
    }
}
