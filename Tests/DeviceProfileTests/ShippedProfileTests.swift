import Foundation
import IPCWire
import Testing
@testable import DeviceProfile

/// The package root, found from this file's path (Tests/DeviceProfileTests/<file>).
let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let shippedProfiles: [String] = {
    let folder = packageRoot.appendingPathComponent("device-profiles")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.filter { $0.hasSuffix(".yaml") }.sorted().map { folder.appendingPathComponent($0).path }
}()

func shipped(_ name: String) throws -> DeviceProfile {
    try DeviceProfile.load(path: packageRoot.appendingPathComponent("device-profiles/\(name)").path)
}

@Suite("Shipped profiles")
struct ShippedProfileTests {
    @Test("the shipped set is there")
    func shippedSetIsThere() {
        let names = shippedProfiles.map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(names.contains("doorbell.yaml"))
        #expect(names.contains("control-panel.yaml"))
        #expect(names.contains("pi-webcam.yaml"))
        #expect(names.contains("doorbell-secure.yaml"))
    }

    @Test("every shipped profile loads", arguments: shippedProfiles)
    func loads(path: String) throws {
        let profile = try DeviceProfile.load(path: path)
        #expect(profile.sourcePath == path)
        #expect(!profile.identity.devId.isEmpty)
        #expect(profile.identity.localKeyBytes.count == 16)
        // A fleet template still yields a valid device.
        let device = try profile.instance(index: 7)
        #expect(!device.isTemplate)
    }

    @Test("doorbell: screen IPC, 720p30 main, 360p15 sub, answer after 1 s, two users")
    func doorbell() throws {
        let p = try shipped("doorbell.yaml")
        #expect(p.identity.category == "sp_dpsxj")
        #expect(p.identity.name == "Front door")
        #expect(p.capabilities.video?.main == .init(width: 1280, height: 720, fps: 30))
        #expect(p.capabilities.video?.sub == .init(width: 640, height: 360, fps: 15))
        #expect(p.capabilities.video?.codecs == [.h264])
        #expect(p.capabilities.audio?.codecs == [.pcma, .opus])
        #expect(p.capabilities.channelTypes == [.audio, .video, .audioVideo])
        #expect(p.capabilities.callTypes == [.oneToOne, .oneToMore, .oneToMoreSpecial])
        #expect(p.capabilities.liveView)
        #expect(p.rtcCapability == 7)
        #expect(p.supportsTwoWayVideo)
        #expect(p.camera == .testPattern)
        #expect(p.behaviour.answerPolicy == .answer(afterSeconds: 1))
        #expect(p.behaviour.household == ["user-alice", "user-bob"])
        #expect(p.behaviour.callType == .oneToOne)
        #expect(p.behaviour.callTimeout == 30)
        #expect(p.security == .plain)
        #expect(p.timers == DeviceProfile.Timers(heartbeatInterval: 10, heartbeatTimeout: 30, connectTimeout: 20))
        #expect(p.resolvedTopics.in == "smart/device/in/\(p.identity.devId)")
        #expect(p.broker.url == nil)
        #expect(p.brokerUsername == p.identity.devId)
    }

    @Test("control panel: manual answer, call types 1 and 3, no live view")
    func controlPanel() throws {
        let p = try shipped("control-panel.yaml")
        #expect(p.identity.category == "dgnzk")
        #expect(p.behaviour.answerPolicy == .manual)
        #expect(p.capabilities.callTypes == [.oneToOne, .oneToMoreSpecial])
        #expect(p.capabilities.channelTypes == [.audio, .audioVideo])
        #expect(p.behaviour.callType == .oneToMoreSpecial)
        #expect(p.behaviour.channelType == .audioVideo)
        #expect(!p.capabilities.liveView)
        #expect(p.rtcCapability == 7)
        #expect(p.capabilities.video?.main == .init(width: 1024, height: 600, fps: 20))
    }

    @Test("pi webcam: v4l2 /dev/video0 mjpeg, explicit broker")
    func piWebcam() throws {
        let p = try shipped("pi-webcam.yaml")
        #expect(p.camera == .v4l2(.init(device: "/dev/video0", format: .mjpeg, width: 1280, height: 720, fps: 30)))
        #expect(p.broker.url == DeviceProfile.BrokerURL(tls: false, host: "127.0.0.1", port: 1883))
        #expect(p.behaviour.answerPolicy == .answer(afterSeconds: 2))
    }

    @Test("secured example: pv2.3, a fleet template")
    func secure() throws {
        let p = try shipped("doorbell-secure.yaml")
        #expect(p.security == .pv23)
        #expect(p.security.versionPrefix == Array("2.3".utf8))
        #expect(p.isTemplate)
        let d = try p.instance(index: 42)
        #expect(d.identity.devId == "ipcemu-secure-0042")
        #expect(d.identity.name == "Secure doorbell 42")
        #expect(d.brokerUsername == "ipcemu-secure-0042")
        #expect(d.resolvedTopics.out == "smart/device/out/ipcemu-secure-0042")
        #expect(d.behaviour.answerPolicy == .answer(afterSeconds: 0.5))
        #expect(!d.capabilities.liveView)
    }

    @Test("ability fields follow PROTOCOL.md 5")
    func abilityFields() throws {
        let p = try shipped("doorbell.yaml")
        guard case .object(let f) = p.meta.envelopeData else {
            Issue.record("meta body is not an object")
            return
        }
        #expect(f["type"] == .string("meta"))
        #expect(f["devId"] == .string("ipcemu-doorbell-0001"))
        #expect(f["support"] == .bool(true))
        #expect(f["rtcCapability"] == .int(7))
        #expect(f["bizType"] == .string("screen_ipc"))
        #expect(f["category"] == .string("sp_dpsxj"))
        #expect(f["channelTypes"] == .array([.int(0), .int(1), .int(2)]))
        #expect(f["liveView"] == .bool(true))
        let streams: JSONValue = .array([
            .object(["stream_type": .int(0), "width": .int(1280), "height": .int(720), "fps": .int(30)]),
            .object(["stream_type": .int(1), "width": .int(640), "height": .int(360), "fps": .int(15)]),
        ])
        #expect(f["video"] == .object(["codecs": .array([.string("H264")]), "streams": streams]))
        #expect(f["audio"] == .object(["codecs": .array([.string("PCMA"), .string("OPUS")])]))
    }
}
