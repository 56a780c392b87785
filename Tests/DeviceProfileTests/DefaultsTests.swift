import Foundation
import IPCWire
import Testing
@testable import DeviceProfile

@Suite("Defaults and conveniences")
struct DefaultsTests {
    @Test("a profile with only an identity gets every default")
    func minimalProfile() throws {
        let p = try DeviceProfile.parse(yaml: identityLines, fileName: "min.yaml")
        #expect(p.identity.name == "dev1")
        #expect(p.identity.productId == nil)
        #expect(p.capabilities.channelTypes == [.audio, .video, .audioVideo])
        #expect(p.capabilities.callTypes == [.oneToOne, .oneToMore, .oneToMoreSpecial])
        #expect(p.capabilities.twoWay)
        #expect(!p.capabilities.liveView)
        #expect(p.capabilities.video == DeviceProfile.Video(
            codecs: [.h264], main: .init(width: 1280, height: 720, fps: 30), sub: .init(width: 640, height: 360, fps: 15)))
        #expect(p.capabilities.audio?.codecs == [.pcma, .opus])
        #expect(p.rtcCapability == 7)
        #expect(p.behaviour == DeviceProfile.Behaviour(
            answerPolicy: .answer(afterSeconds: 1), household: [], callType: .oneToOne, channelType: .audioVideo,
            callTimeout: 30))
        #expect(p.timers.heartbeatInterval == 10)
        #expect(p.timers.heartbeatTimeout == 30)
        #expect(p.timers.connectTimeout == 20)
        #expect(p.camera == .testPattern)
        #expect(p.security == .plain)
        #expect(p.topics == TopicTemplates(
            in: "smart/device/in/{devId}", out: "smart/device/out/{devId}", meta: "smart/device/meta/{devId}"))
        #expect(p.broker == DeviceProfile.Broker(url: nil, username: nil, password: nil, keepAlive: 30))
        #expect(p.brokerUsername == "dev1")
        // The same as building one in code with the memberwise defaults.
        var byHand = DeviceProfile(identity: .init(devId: "dev1", localKey: "0123456789abcdef", p2pPassword: "pw"))
        byHand.sourcePath = "min.yaml"
        #expect(p == byHand)
    }

    @Test("resolved topics for the device and for another id")
    func topics() throws {
        let p = try DeviceProfile.parse(yaml: identityLines + """

            topics:
              in: lab/{devId}/in
              out: lab/{devId}/out
            """)
        #expect(p.resolvedTopics == ResolvedTopics(
            in: "lab/dev1/in", out: "lab/dev1/out", meta: "smart/device/meta/dev1", online: "smart/device/meta/dev1/online",
            wake: "m/w/dev1"))
        #expect(p.topics(for: "other").in == "lab/other/in")
    }

    @Test("rtcCapability and two-way support follow audio, video and twoWay")
    func rtcCapability() throws {
        let audioOnly = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              video: none
              rtcCapability: 5
            """)
        #expect(audioOnly.rtcCapability == 5)
        #expect(!audioOnly.supportsTwoWayVideo)
        #expect(audioOnly.capabilities.channelTypes == [.audio])
        #expect(audioOnly.behaviour.channelType == .audio)
        #expect(audioOnly.meta.streams.isEmpty)
        #expect(audioOnly.meta.videoCodecs.isEmpty)
        #expect(!audioOnly.meta.support)

        let oneWay = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              twoWay: false
              audio: none
            """)
        #expect(oneWay.rtcCapability == 2)
        #expect(oneWay.capabilities.channelTypes == [.video])
        #expect(!oneWay.supportsTwoWayVideo)
    }

    @Test("a main stream without a sub stream gets half its size at up to 15 fps")
    func subDefault() throws {
        let p = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              video:
                main: {width: 1920, height: 1080, fps: 25}
            """)
        #expect(p.capabilities.video?.sub == .init(width: 960, height: 540, fps: 15))
        #expect(p.capabilities.video?.stream(type: 0)?.width == 1920)
        #expect(p.capabilities.video?.stream(type: 1)?.width == 960)
        #expect(p.capabilities.video?.stream(type: 2) == nil)
        let small = DeviceProfile.StreamFormat.defaultSub(for: .init(width: 96, height: 64, fps: 10))
        #expect(small == .init(width: 96, height: 64, fps: 10))
    }

    @Test("video codecs: H265 (PROTOCOL.md 7) is accepted and reaches the probe; an unknown codec names the choices")
    func hevcCodec() throws {
        let p = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              video:
                codecs: [H264, H265]
            """)
        #expect(p.capabilities.video?.codecs == [.h264, .h265])
        do {
            _ = try DeviceProfile.parse(yaml: identityLines + """

                capabilities:
                  video:
                    codecs: [H266]
                """)
            Issue.record("H266 accepted")
        } catch {
            #expect("\(error)".contains("H265"), "\(error)")
        }
    }

    @Test("v4l2 and clip cameras take the main stream's size and rate unless told")
    func cameraDefaults() throws {
        let v = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              video:
                main: {width: 640, height: 480, fps: 15}
            camera:
              type: v4l2
              device: USB Camera
            """)
        #expect(v.camera == .v4l2(.init(device: "USB Camera", format: .auto, width: 640, height: 480, fps: 15)))

        // An H.265 camera (PROTOCOL.md 7: passed through to the fmp4Stream channel).
        let h = try DeviceProfile.parse(yaml: identityLines + """

            capabilities:
              video:
                codecs: [H265]
            camera: {type: v4l2, device: /dev/video0, format: h265, width: 320, height: 180, fps: 15}
            """)
        #expect(h.camera == .v4l2(.init(device: "/dev/video0", format: .h265, width: 320, height: 180, fps: 15)))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-profile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data([0, 0, 0, 1, 0x67]).write(to: folder.appendingPathComponent("door.h264"))
        let profilePath = folder.appendingPathComponent("clip.yaml").path
        try Data((identityLines + "\ncamera:\n  type: clip\n  path: door.h264\n").utf8)
            .write(to: URL(fileURLWithPath: profilePath))
        let c = try DeviceProfile.load(path: profilePath)
        // A relative clip path is relative to the profile's folder.
        #expect(c.camera == .clip(.init(path: folder.appendingPathComponent("door.h264").standardizedFileURL.path, fps: 30)))
    }

    @Test("answer policies and durations")
    func policies() throws {
        for (text, policy) in [
            ("answer", DeviceProfile.AnswerPolicy.answer(afterSeconds: 1)), ("reject", .reject),
            ("ignore", .ignore), ("busy", .busy), ("manual", .manual),
        ] {
            let p = try DeviceProfile.parse(yaml: identityLines + "\nbehaviour:\n  answerPolicy: \(text)\n")
            #expect(p.behaviour.answerPolicy == policy)
            #expect(p.behaviour.answerPolicy.name == text)
        }
        let quick = try DeviceProfile.parse(yaml: identityLines + """

            behaviour:
              answerDelay: 0
            timers:
              heartbeatInterval: 0.2
              heartbeatTimeout: 0.6
              connectTimeout: 1.5
            """)
        #expect(quick.behaviour.answerPolicy == .answer(afterSeconds: 0))
        #expect(quick.timers == .init(heartbeatInterval: 0.2, heartbeatTimeout: 0.6, connectTimeout: 1.5))
    }

    @Test("answerDelay delays a reject; with ignore, busy or manual it is ignored with a warning")
    func answerDelayAcrossPolicies() throws {
        let delayed = try DeviceProfile.parse(yaml: identityLines + """

            behaviour:
              answerPolicy: reject
              answerDelay: 2
            """)
        #expect(delayed.behaviour.answerPolicy == .rejectAfter(seconds: 2))
        #expect(delayed.behaviour.answerPolicy.name == "reject")
        #expect(delayed.warnings.isEmpty)
        let atOnce = try DeviceProfile.parse(yaml: identityLines + "\nbehaviour:\n  answerPolicy: reject\n  answerDelay: 0\n")
        #expect(atOnce.behaviour.answerPolicy == .reject)

        for policy in ["ignore", "busy", "manual"] {
            let p = try DeviceProfile.parse(yaml: identityLines + """

                behaviour:
                  answerPolicy: \(policy)
                  answerDelay: 2
                """, fileName: "flip.yaml")
            #expect(p.behaviour.answerPolicy.name == policy)
            let warning = try #require(p.warnings.first)
            #expect(p.warnings.count == 1)
            #expect(warning.file == "flip.yaml" && warning.line == 8 && warning.field == "behaviour.answerDelay")
            #expect(warning.message == "answerDelay applies to answerPolicy 'answer' or 'reject', not '\(policy)': ignored")
            #expect(p.warnings.first?.description.hasPrefix("flip.yaml:8: warning: behaviour.answerDelay: ") == true)
        }
        #expect(try DeviceProfile.parse(yaml: identityLines + "\nbehaviour:\n  answerDelay: 3\n").warnings.isEmpty)
    }

    @Test("broker: url forms, username template, TLS files")
    func broker() throws {
        #expect(try DeviceProfile.BrokerURL.parse("mqtt://localhost").get() == .init(tls: false, host: "localhost", port: 1883))
        #expect(try DeviceProfile.BrokerURL.parse("mqtts://b.example.com/").get() == .init(tls: true, host: "b.example.com", port: 8883))
        #expect(try DeviceProfile.BrokerURL.parse("mqtt://[::1]:1884").get() == .init(tls: false, host: "::1", port: 1884))
        #expect(throws: DeviceProfile.BrokerURL.ParseProblem.self) { try DeviceProfile.BrokerURL.parse("mqtt://u:p@host").get() }
        #expect(throws: DeviceProfile.BrokerURL.ParseProblem.self) { try DeviceProfile.BrokerURL.parse("mqtt://").get() }
        #expect(DeviceProfile.BrokerURL(tls: false, host: "::1", port: 1884).description == "mqtt://[::1]:1884")

        let p = try DeviceProfile.parse(yaml: identityLines + """

            broker:
              url: mqtts://broker.local:8884
              username: dev-{devId}
              password: ""
              caFile: /etc/hostname
              keepAlive: 15
            """)
        #expect(p.broker.url == .init(tls: true, host: "broker.local", port: 8884))
        #expect(p.brokerUsername == "dev-dev1")
        #expect(p.broker.password == "")
        #expect(p.broker.caFile == "/etc/hostname")
        #expect(p.broker.keepAlive == 15)
    }
}

@Suite("Fleet instances")
struct FleetTests {
    @Test("a template makes distinct devices; name and username follow")
    func template() throws {
        let p = try DeviceProfile.parse(yaml: """
            identity:
              devId: door-{index:6}
              localKey: "0123456789abcdef"
              p2pPassword: pw
              category: sp_dpsxj
            """)
        #expect(p.isTemplate)
        #expect(p.summary.contains("(fleet template)"))
        let a = try p.instance(index: 0), b = try p.instance(index: 123)
        #expect(a.identity.devId == "door-000000")
        #expect(b.identity.devId == "door-000123")
        #expect(b.identity.name == "door-000123")
        #expect(b.brokerUsername == "door-000123")
        #expect(b.resolvedTopics.in == "smart/device/in/door-000123")
        #expect(!b.isTemplate)
        // Wider than the padding: just the digits.
        #expect(try p.instance(index: 12_345_678).identity.devId == "door-12345678")
        #expect(throws: ProfileError.self) { try p.instance(index: -1) }
    }

    @Test("plain {index} and a profile that is not a template")
    func plain() throws {
        let t = try DeviceProfile.parse(yaml: identityLines.replacingOccurrences(of: "devId: dev1", with: "devId: d{index}x"))
        #expect(try t.instance(index: 5).identity.devId == "d5x")
        let p = try DeviceProfile.parse(yaml: identityLines)
        #expect(!p.isTemplate)
        #expect(try p.instance(index: 3).identity.devId == "dev1-3")
    }

    @Test("withDevId checks the new id")
    func override() throws {
        let p = try DeviceProfile.parse(yaml: identityLines)
        let q = try p.withDevId("abc.DEF_1-2")
        #expect(q.identity.devId == "abc.DEF_1-2")
        #expect(q.identity.name == "abc.DEF_1-2")
        #expect(q.identity.localKey == p.identity.localKey)
        do {
            _ = try p.withDevId("bad/id")
            Issue.record("accepted a devId with a slash")
        } catch {
            #expect(error.field == "identity.devId")
            #expect(error.message.contains("character '/' is not allowed"))
        }
        #expect(throws: ProfileError.self) { try p.withDevId("still-{index}") }
        #expect(throws: ProfileError.self) { try p.withDevId(String(repeating: "x", count: 65)) }
    }
}

@Suite("Topic templates")
struct TopicTemplateTests {
    @Test("accepted and refused templates", arguments: [
        ("smart/device/in/{devId}", true),
        ("{devId}", true),
        ("/leading/{devId}/slash", true),
        ("", false),
        ("a/{devId}/{devId}", true),
        ("a/{devId}/{index}", false),
        ("a/#/{devId}", false),
        ("a//{devId}", false),
        ("a/{devId", false),
        ("a/devId}", false),
        ("a/{devId}}", false),
    ])
    func template(text: String, ok: Bool) {
        #expect((TopicTemplates.problem(with: text) == nil) == ok, "\(TopicTemplates.problem(with: text) ?? "ok")")
    }
}
