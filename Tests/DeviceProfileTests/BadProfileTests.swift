import Foundation
import Testing
@testable import DeviceProfile

/// A good identity section: lines 1 to 5 of every case below.
let identityLines = """
    identity:
      devId: dev1
      localKey: "0123456789abcdef"
      p2pPassword: pw
      category: sp_dpsxj
    """

/// One bad profile and the first mistake it must report.
struct BadCase: CustomTestStringConvertible, Sendable {
    var name: String
    var yaml: String
    var kind: ProfileError.Kind
    var field: String
    var line: Int?
    /// The message must contain this.
    var message: String
    var testDescription: String { name }
}

let badCases: [BadCase] = [
    BadCase(name: "wrong type: fps is a word", yaml: identityLines + """

        capabilities:
          video:
            main: {width: 1280, height: 720, fps: thirty}
        """,
        kind: .wrongType, field: "capabilities.video.main.fps", line: 8,
        message: "expected a positive integer, got 'thirty'"),
    BadCase(name: "wrong type: a quoted number", yaml: identityLines + """

        timers:
          connectTimeout: "20"
        """,
        kind: .wrongType, field: "timers.connectTimeout", line: 7,
        message: "expected a positive number of seconds, got \"20\" (a quoted string)"),
    BadCase(name: "wrong type: a list where a section belongs", yaml: identityLines + """

        behaviour: [answer]
        """,
        kind: .wrongType, field: "behaviour", line: 6, message: "expected a mapping with keys answerPolicy"),
    BadCase(name: "wrong type: boolean", yaml: identityLines + """

        capabilities:
          liveView: maybe
        """,
        kind: .wrongType, field: "capabilities.liveView", line: 7, message: "expected true or false, got 'maybe'"),
    BadCase(name: "out of range: fps 120", yaml: identityLines + """

        capabilities:
          video:
            main:
              width: 1280
              height: 720
              fps: 120
        """,
        kind: .invalidValue, field: "capabilities.video.main.fps", line: 11,
        message: "expected an integer from 1 to 60, got 120"),
    BadCase(name: "out of range: negative heartbeat interval", yaml: identityLines + """

        timers:
          heartbeatInterval: -1
        """,
        kind: .invalidValue, field: "timers.heartbeatInterval", line: 7,
        message: "expected a positive number of seconds, got -1"),
    BadCase(name: "out of range: odd width", yaml: identityLines + """

        capabilities:
          video:
            main: {width: 1279, height: 720, fps: 30}
        """,
        kind: .invalidValue, field: "capabilities.video.main.width", line: 8,
        message: "expected an even width (H.264 4:2:0 video), got 1279"),
    BadCase(name: "out of range: channel type 3", yaml: identityLines + """

        capabilities:
          channelTypes: [0, 3]
        """,
        kind: .invalidValue, field: "capabilities.channelTypes[1]", line: 7,
        message: "expected one of 0 (audio), 1 (video), 2 (audio and video), got 3"),
    BadCase(name: "unknown key with a did-you-mean", yaml: identityLines + """

        behavior:
          answerPolicy: answer
        """,
        kind: .unknownKey, field: "behavior", line: 6,
        message: "unknown key 'behavior' at the top level; did you mean 'behaviour'?"),
    BadCase(name: "unknown nested key", yaml: identityLines + """

        capabilities:
          video:
            mian: {width: 1280, height: 720, fps: 30}
        """,
        kind: .unknownKey, field: "capabilities.video.mian", line: 8,
        message: "unknown key 'mian' in 'capabilities.video'; did you mean 'main'?"),
    BadCase(name: "duplicate key", yaml: identityLines + """

        timers:
          heartbeatInterval: 5
          heartbeatInterval: 6
        """,
        kind: .duplicateKey, field: "timers.heartbeatInterval", line: 8,
        message: "duplicate key 'heartbeatInterval' (first given at line 7)"),
    BadCase(name: "localKey of 15 characters", yaml: """
        identity:
          devId: dev1
          localKey: "0123456789abcde"
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .invalidValue, field: "identity.localKey", line: 3,
        message: "expected exactly 16 ASCII characters, got 15 characters"),
    BadCase(name: "localKey not ASCII", yaml: """
        identity:
          devId: dev1
          localKey: "0123456789abcdé"
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .invalidValue, field: "identity.localKey", line: 3,
        message: "expected exactly 16 ASCII characters, got the non-ASCII character 'é'"),
    BadCase(name: "devId with a space", yaml: """
        identity:
          devId: front door
          localKey: "0123456789abcdef"
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .invalidValue, field: "identity.devId", line: 2,
        message: "character ' ' is not allowed in a devId"),
    BadCase(name: "devId with an unknown placeholder", yaml: """
        identity:
          devId: door-{n}
          localKey: "0123456789abcdef"
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .invalidValue, field: "identity.devId", line: 2, message: "unknown placeholder '{n}'"),
    BadCase(name: "bad enum: answer policy", yaml: identityLines + """

        behaviour:
          answerPolicy: anwser
        """,
        kind: .invalidValue, field: "behaviour.answerPolicy", line: 7,
        message: "expected one of answer, reject, ignore, busy, manual, got 'anwser' (did you mean 'answer'?)"),
    BadCase(name: "bad enum: security", yaml: identityLines + """

        security: 2.3
        """,
        kind: .invalidValue, field: "security", line: 6,
        message: "expected one of plain, pv2.2, pv2.3, got '2.3' (did you mean 'pv2.3'?)"),
    BadCase(name: "bad enum: camera format", yaml: identityLines + """

        camera:
          type: v4l2
          device: /dev/video0
          format: jpeg
        """,
        kind: .invalidValue, field: "camera.format", line: 9, message: "expected one of mjpeg, yuyv, h264, h265, auto, got 'jpeg'"),
    BadCase(name: "an H.265 camera without H265 among the video codecs", yaml: identityLines + """

        camera:
          type: v4l2
          device: /dev/video0
          format: h265
        """,
        kind: .inconsistent, field: "camera.format", line: 9,
        message: "an H.265 camera feeds only the fmp4Stream data channel: list H265 in capabilities.video.codecs"),
    BadCase(name: "inconsistent rtcCapability", yaml: identityLines + """

        capabilities:
          twoWay: false
          rtcCapability: 7
        """,
        kind: .inconsistent, field: "capabilities.rtcCapability", line: 8,
        message: "expected 3 (audio 1, video 2, no two-way, from the other capabilities), got 7"),
    BadCase(name: "inconsistent channel type without video", yaml: identityLines + """

        capabilities:
          channelTypes: [0, 1]
          video: none
        """,
        kind: .inconsistent, field: "capabilities.channelTypes[1]", line: 7,
        message: "channel type 1 (video) needs video, but capabilities.video is none"),
    BadCase(name: "inconsistent heartbeat timers", yaml: identityLines + """

        timers:
          heartbeatInterval: 40
        """,
        kind: .inconsistent, field: "timers.heartbeatInterval", line: 7,
        message: "expected heartbeatTimeout (30 s, the default) to be longer than heartbeatInterval (40 s)"),
    BadCase(name: "call type the capabilities lack", yaml: identityLines + """

        capabilities:
          callTypes: [1]
        behaviour:
          callType: 2
        """,
        kind: .inconsistent, field: "behaviour.callType", line: 9,
        message: "call type 2 is not in capabilities.callTypes [1]"),
    BadCase(name: "sub stream larger than main", yaml: identityLines + """

        capabilities:
          video:
            main: {width: 640, height: 360, fps: 15}
            sub: {width: 1280, height: 720, fps: 15}
        """,
        kind: .inconsistent, field: "capabilities.video.sub", line: 9,
        message: "expected a sub stream no larger than the main stream (640x360), got 1280x720"),
    BadCase(name: "bad topic template: misspelt placeholder", yaml: identityLines + """

        topics:
          in: smart/device/in/{devid}
        """,
        kind: .invalidValue, field: "topics.in", line: 7,
        message: "unknown placeholder '{devid}' in 'smart/device/in/{devid}'; the only placeholder is {devId} (did you mean {devId}?)"),
    BadCase(name: "bad topic template: no placeholder", yaml: identityLines + """

        topics:
          out: smart/device/out
        """,
        kind: .invalidValue, field: "topics.out", line: 7,
        message: "expected a topic template containing {devId}, got 'smart/device/out'"),
    BadCase(name: "bad topic template: wildcard", yaml: identityLines + """

        topics:
          meta: smart/+/meta/{devId}
        """,
        kind: .invalidValue, field: "topics.meta", line: 7, message: "without MQTT wildcards"),
    BadCase(name: "topics in and out the same", yaml: identityLines + """

        topics:
          out: smart/device/in/{devId}
        """,
        kind: .inconsistent, field: "topics.out", line: 7,
        message: "expected topics.out to differ from topics.in"),
    BadCase(name: "missing required field", yaml: """
        identity:
          devId: dev1
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .missingField, field: "identity.localKey", line: 2,
        message: "missing required field 'localKey' in 'identity': expected exactly 16 ASCII characters"),
    BadCase(name: "missing identity section", yaml: """
        security: plain
        """,
        kind: .missingField, field: "identity", line: 1, message: "missing required field 'identity' in the profile"),
    BadCase(name: "missing stream field", yaml: identityLines + """

        capabilities:
          video:
            main: {width: 1280, height: 720}
        """,
        kind: .missingField, field: "capabilities.video.main.fps", line: 8, message: "missing required field 'fps'"),
    BadCase(name: "empty value", yaml: identityLines + """

        timers:
          connectTimeout:
        """,
        kind: .wrongType, field: "timers.connectTimeout", line: nil,
        message: "expected a positive number of seconds, got an empty value"),
    BadCase(name: "camera key for another camera type", yaml: identityLines + """

        camera:
          type: testPattern
          fps: 10
        """,
        kind: .unknownKey, field: "camera.fps", line: 8, message: "'fps' does not apply to the testPattern camera"),
    BadCase(name: "clip file that does not exist", yaml: identityLines + """

        camera:
          type: clip
          path: /nonexistent/ipcemu/clip.h264
        """,
        kind: .invalidValue, field: "camera.path", line: 8, message: "file not found: /nonexistent/ipcemu/clip.h264"),
    BadCase(name: "broker url with the wrong scheme", yaml: identityLines + """

        broker:
          url: http://127.0.0.1:1883
        """,
        kind: .invalidValue, field: "broker.url", line: 7, message: "the scheme must be mqtt or mqtts"),
    BadCase(name: "broker url port out of range", yaml: identityLines + """

        broker:
          url: mqtt://localhost:70000
        """,
        kind: .invalidValue, field: "broker.url", line: 7, message: "the port must be 1 to 65535"),
    BadCase(name: "TLS file without mqtts", yaml: identityLines + """

        broker:
          url: mqtt://localhost
          caFile: /etc/hostname
        """,
        kind: .inconsistent, field: "broker.caFile", line: 8, message: "caFile needs an mqtts:// broker url"),
    BadCase(name: "not YAML at all", yaml: """
        identity:
          devId: [dev1
          localKey: x
        """,
        kind: .notYAML, field: "", line: 3, message: "not valid YAML: did not find expected ',' or ']'"),
    BadCase(name: "tab indentation", yaml: "identity:\n\tdevId: dev1\n",
        kind: .notYAML, field: "", line: 2, message: "not valid YAML"),
    BadCase(name: "a bare scalar", yaml: "hello world\n",
        kind: .wrongType, field: "", line: 1, message: "expected a mapping of profile sections"),
    BadCase(name: "empty file", yaml: "",
        kind: .empty, field: "", line: nil, message: "the profile is empty"),
    BadCase(name: "comments only", yaml: "# nothing here\n# at all\n",
        kind: .empty, field: "", line: nil, message: "the profile is empty"),
    BadCase(name: "two documents", yaml: identityLines + "\n---\n" + identityLines,
        kind: .notYAML, field: "", line: 6, message: "but found another document"),
    BadCase(name: "first mistake by position, not by section order", yaml: """
        timers:
          connectTimeout: soon
        identity:
          devId: dev1
          localKey: short
          p2pPassword: pw
          category: sp_dpsxj
        """,
        kind: .wrongType, field: "timers.connectTimeout", line: 2,
        message: "expected a positive number of seconds, got 'soon'"),
]

@Suite("Bad profiles")
struct BadProfileTests {
    @Test("reports the first mistake with its field, line and what was expected", arguments: badCases)
    func badProfile(_ c: BadCase) {
        do {
            let profile = try DeviceProfile.parse(yaml: c.yaml, fileName: "bad.yaml")
            Issue.record("parsed without error: \(profile.summary)")
        } catch {
            #expect(error.kind == c.kind, "\(error)")
            #expect(error.field == c.field, "\(error)")
            if let line = c.line { #expect(error.line == line, "\(error)") }
            #expect(error.message.contains(c.message), "\(error)")
            #expect(error.file == "bad.yaml")
            // The printed form is file:line: field: message.
            var prefix = "bad.yaml"
            if let line = error.line { prefix += ":\(line)" }
            prefix += ": " + (c.field.isEmpty ? "" : c.field + ": ")
            #expect(error.description == prefix + error.message)
        }
    }

    @Test("a file that does not exist is a typed error")
    func missingFile() {
        #expect(throws: ProfileError.self) { try DeviceProfile.load(path: "/nonexistent/ipcemu/profile.yaml") }
        do {
            _ = try DeviceProfile.load(path: "/nonexistent/ipcemu/profile.yaml")
        } catch {
            #expect(error.kind == .unreadable)
            #expect(error.description == "/nonexistent/ipcemu/profile.yaml: no such file")
        }
    }

    @Test("a file that is not UTF-8 is a typed error")
    func binaryFile() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("ipcemu-profile-\(UUID().uuidString).yaml").path
        try Data([0xFF, 0xFE, 0x00, 0xC3, 0x28]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try DeviceProfile.load(path: path)
            Issue.record("loaded a binary file")
        } catch {
            #expect(error.kind == .unreadable, "\(error)")
            #expect(error.message == "expected UTF-8 text, the file holds other bytes")
        }
    }
}
