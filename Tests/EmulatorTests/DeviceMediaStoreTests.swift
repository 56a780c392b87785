import Camera
import CameraTestSupport
import DeviceProfile
import Foundation
import IPCEmuTesting
import Testing
import TestSupport
@testable import Emulator

/// PROTOCOL.md 8.5: a device's files, their names and limits, the DP values that point at them,
/// and snapshots and messages taken from the shared feeds of a stamped test pattern.
@Suite("Device media store", .serialized)
struct DeviceMediaStoreTests {
    static let jpegBytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 96) + [0xFF, 0xD9]

    @Test("names: what the device makes is taken; '/', '..', hidden, other extensions and odd characters are refused")
    func names() throws {
        for good in ["press-617bdf7a1732200000.jpg", "motion-1732200000.jpg", "message-617bdf7a1732200000.mp4", "a.b_c-d.jpg"] {
            #expect(throws: Never.self) { try DeviceMediaStore.validate(name: good) }
        }
        let bad = ["", "../x.jpg", "a/b.jpg", "..jpg", ".hidden.jpg", "x.txt", "x.jpeg", "a b.jpg", "x.jpg\u{0}",
                   "é.jpg", String(repeating: "a", count: 125) + ".jpg", "x.JPG", "%2e%2e.jpg"]
        for name in bad {
            #expect(throws: MediaStoreError.self, "\(name)") { try DeviceMediaStore.validate(name: name) }
        }
        #expect(DeviceMediaStore.pressSnapshotName(callId: "617bdf7a1732200000") == "press-617bdf7a1732200000.jpg")
        #expect(DeviceMediaStore.motionSnapshotName(unixSeconds: 1_732_200_000) == "motion-1732200000.jpg")
        #expect(DeviceMediaStore.messageName(callId: "617bdf7a1732200000") == "message-617bdf7a1732200000.mp4")
        #expect(DeviceMediaStore.apiPath(devId: "dev1", name: "press-1.jpg") == "/api/devices/dev1/media/press-1.jpg")
        // A devId cannot lead the folder out of the root.
        #expect(DeviceMediaStore.folderName(devId: "../etc") == "%2E%2E%2Fetc")
        #expect(!DeviceMediaStore.folderName(devId: "a/b").contains("/"))
    }

    @Test("store, read, list oldest first; a name stored again replaces the file; bad names and oversize files change nothing")
    func storeAndRead() async throws {
        let root = try TemporaryDirectory(prefix: "ipcemu-media")
        let store = DeviceMediaStore(devId: "dev-media-1", root: root.path)
        let a = try await store.store(Self.jpegBytes, name: "press-aaaaaaaa1.jpg")
        #expect(a.path == "/api/devices/dev-media-1/media/press-aaaaaaaa1.jpg")
        #expect(a.kind == .image && a.bytes == Self.jpegBytes.count && a.durationSeconds == nil)
        let b = try await store.store([1, 2, 3], name: "message-bbbbbbbb1.mp4", durationSeconds: 10)
        #expect(b.kind == .video && b.durationSeconds == 10)
        #expect(await store.read("press-aaaaaaaa1.jpg") == Self.jpegBytes)
        #expect(await store.list().map(\.name) == ["press-aaaaaaaa1.jpg", "message-bbbbbbbb1.mp4"])
        #expect(FileManager.default.fileExists(atPath: root.path + "/dev-media-1/press-aaaaaaaa1.jpg"))
        // Replaced: new bytes, now the newest.
        try await store.store([9, 9], name: "press-aaaaaaaa1.jpg")
        #expect(await store.read("press-aaaaaaaa1.jpg") == [9, 9])
        #expect(await store.list().map(\.name) == ["message-bbbbbbbb1.mp4", "press-aaaaaaaa1.jpg"])
        // Refusals.
        await #expect(throws: MediaStoreError.self) { try await store.store([1], name: "../escape.jpg") }
        #expect(!FileManager.default.fileExists(atPath: root.path + "/escape.jpg"))
        #expect(await store.read("../dev-media-1/press-aaaaaaaa1.jpg") == nil)
        #expect(await store.read("press-unknown.jpg") == nil)
        let small = DeviceMediaStore(devId: "dev-media-2", root: root.path, limits: MediaLimits(maxFiles: 10, maxBytes: 100))
        await #expect(throws: MediaStoreError.tooLarge(name: "press-x.jpg", bytes: 101, limit: 100)) {
            try await small.store([UInt8](repeating: 0, count: 101), name: "press-x.jpg")
        }
        #expect(await small.list().isEmpty)
        #expect(await small.stats.refused == 1)
        // No partial files are left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path + "/dev-media-1").sorted()
        #expect(names == ["message-bbbbbbbb1.mp4", "press-aaaaaaaa1.jpg"])
    }

    @Test("limits: past the count or the bytes the oldest files go first, from disk too; a reopened folder keeps its files")
    func limits() async throws {
        let root = try TemporaryDirectory(prefix: "ipcemu-media")
        let store = DeviceMediaStore(devId: "dev-limits", root: root.path, limits: MediaLimits(maxFiles: 3, maxBytes: 1_000))
        for i in 1...5 { try await store.store([UInt8](repeating: UInt8(i), count: 100), name: "motion-\(i).jpg") }
        #expect(await store.list().map(\.name) == ["motion-3.jpg", "motion-4.jpg", "motion-5.jpg"])
        #expect(!FileManager.default.fileExists(atPath: store.directory + "/motion-1.jpg"))
        #expect(await store.stats.evicted == 2)
        // 850 more bytes: a fourth file (motion-3 goes), then 200 + 850 > 1000 (motion-4 goes).
        try await store.store([UInt8](repeating: 0, count: 850), name: "message-m1.mp4", durationSeconds: 3)
        #expect(await store.list().map(\.name) == ["motion-5.jpg", "message-m1.mp4"])
        #expect(await store.stats.evicted == 4)
        // Reopened (a configured folder reused): the files are found again, oldest first.
        let again = DeviceMediaStore(devId: "dev-limits", root: root.path)
        #expect(Set(await again.list().map(\.name)) == ["motion-5.jpg", "message-m1.mp4"])
        #expect(await again.read("message-m1.mp4")?.count == 850)
    }

    @Test("DP 154/115, 185 and 212 values: base64 JSON in the shapes of PROTOCOL.md 8.3 and 8.5")
    func dataPointValues() throws {
        let press = MediaRef(name: "press-617bdf7a1732200000.jpg", path: "/api/devices/dev1/media/press-617bdf7a1732200000.jpg",
                             kind: .image, bytes: 1000, storedAtMs: 0)
        let dp154 = DoorbellMediaDPs.snapshotReference(press)
        let json154 = String(decoding: try #require(Data(base64Encoded: dp154)), as: UTF8.self)
        #expect(json154 == #"{"bucket":"local","files":[["/api/devices/dev1/media/press-617bdf7a1732200000.jpg",""]],"v":"3.0"}"#)
        #expect(DoorbellMediaDPs.decode(DoorbellMediaDPs.SnapshotReference.self, from: dp154)
                == .init(v: "3.0", bucket: "local", files: [[press.path, ""]]))
        let dp185 = try #require(DoorbellMediaDPs.decode(DoorbellMediaDPs.AlarmMessage.self, from: DoorbellMediaDPs.doorbellAlarm(press)))
        #expect(dp185 == .init(cmd: "ipc_doorbell", type: "image", files: [.init(data: press.path, keyId: "default", iv: "")]))
        let timeout = try #require(DoorbellMediaDPs.decode(DoorbellMediaDPs.InitiativeMessage.self,
                                                           from: DoorbellMediaDPs.doorbellTimeout(snapshot: press, t: 1_732_200_025)))
        #expect(timeout == .init(cmd: "ipc_doorbell", type: "image", files: [press.path], t: 1_732_200_025, duration: nil))
        let noDuration = String(decoding: try #require(Data(base64Encoded: DoorbellMediaDPs.doorbellTimeout(snapshot: press, t: 1))), as: UTF8.self)
        #expect(!noDuration.contains("duration"))
        let message = MediaRef(name: "message-617bdf7a1732200000.mp4", path: "/api/devices/dev1/media/message-617bdf7a1732200000.mp4",
                               kind: .video, bytes: 5000, storedAtMs: 0, durationSeconds: 10)
        let left = try #require(DoorbellMediaDPs.decode(DoorbellMediaDPs.InitiativeMessage.self,
                                                        from: DoorbellMediaDPs.leftMessage(message, t: 1_732_200_050)))
        #expect(left == .init(cmd: "ipc_leave_msg", type: "video", files: [message.path], t: 1_732_200_050, duration: 10))
        let battery = try #require(DoorbellMediaDPs.decode(DoorbellMediaDPs.InitiativeMessage.self, from: DoorbellMediaDPs.initiativeMessage(cmd: .lowBattery, type: .none, files: [], t: 5)))
        #expect(battery == .init(cmd: "ipc_low_battery", type: "none", files: [], t: 5, duration: nil))
        let motion = try #require(DoorbellMediaDPs.decode(DoorbellMediaDPs.InitiativeMessage.self, from: DoorbellMediaDPs.motion(snapshot: nil, t: 6)))
        #expect(motion.cmd == "ipc_motion" && motion.type == "none" && motion.files.isEmpty)
    }

    static func profile(width: Int = 1280, height: Int = 720) -> DeviceProfile {
        var profile = DeviceProfile.testDoorbell()
        profile.capabilities.video?.main = .init(width: width, height: height, fps: 30)
        return profile
    }

    @Test("a press snapshot from the shared feed: one JPEG of at most 100,000 bytes, 1280x720, its stamp intact", .heavy)
    func pressSnapshot() async throws {
        let root = try TemporaryDirectory(prefix: "ipcemu-media")
        let feeds = VideoFeeds()
        let profile = Self.profile()
        let store = DeviceMediaStore(devId: profile.identity.devId, root: root.path)
        let clock = ContinuousClock()
        let began = clock.now
        let taken = await store.takePressSnapshot(callId: "617bdf7a1732200000", profile: profile, feeds: feeds)
        let failure = await store.stats.lastFailure ?? ""
        let ref = try #require(taken, "\(failure)")
        let took = clock.now - began
        #expect(ref.name == "press-617bdf7a1732200000.jpg")
        #expect(ref.bytes <= 100_000)
        let bytes = try #require(await store.read(ref.name))
        let picture = try Snapshot.decode(bytes, format: .jpeg)
        #expect(picture.width == 1280 && picture.height == 720)
        let stamp = try picture.readStamp()
        let t = stamp.unixMs(near: Clocks.unixMs())
        #expect(abs(t - Clocks.unixMs()) < 10_000)
        print("press snapshot from the shared feed: \(ref.bytes) bytes in \(took)")
        // Taken through the one shared capture and encoder.
        #expect(feeds.counts.captures == 1 && feeds.counts.feeds == 1)
        // A second one while the feed lingers reuses them.
        _ = try #require(await store.takeMotionSnapshot(unixSeconds: 1_732_200_000, profile: profile, feeds: feeds))
        #expect(feeds.counts.captures == 1 && feeds.counts.feeds == 1)
        #expect(await store.list().map(\.name) == ["press-617bdf7a1732200000.jpg", "motion-1732200000.jpg"])
    }

    @Test("a left message from the shared feed: 3 s, stamps in order, stored and counted; no camera: nil and counted", .heavy)
    func message() async throws {
        let root = try TemporaryDirectory(prefix: "ipcemu-media")
        let feeds = VideoFeeds()
        let profile = Self.profile(width: 640, height: 360)
        let store = DeviceMediaStore(devId: profile.identity.devId, root: root.path)
        let clock = ContinuousClock()
        let began = clock.now
        let recorded = await store.recordMessage(callId: "617bdf7a1732200000", seconds: 3, profile: profile, feeds: feeds)
        let failure = await store.stats.lastFailure ?? ""
        let ref = try #require(recorded, "\(failure)")
        let took = clock.now - began
        print("message 3 s from the shared feed: \(ref.bytes) bytes, recorded in \(took)")
        #expect(ref.name == "message-617bdf7a1732200000.mp4" && ref.kind == .video)
        #expect(ref.durationSeconds == 3)
        #expect(took < .seconds(6))
        #expect(feeds.counts.captures == 1 && feeds.counts.feeds == 1)
        let counters = try await StampDecoding.mp4Video("\(store.directory)/\(ref.name)").counters
        #expect((80...95).contains(counters.count), "\(counters.count) frames")
        let gaps = zip(counters.dropFirst(), counters).map { (Int($0) - Int($1) + 4096) % 4096 }
        #expect(gaps.allSatisfy { $0 >= 1 && $0 <= 3 }, "\(gaps)")

        var noCamera = profile
        noCamera.capabilities.video = nil
        #expect(await store.recordMessage(callId: "x1", seconds: 3, profile: noCamera, feeds: feeds) == nil)
        #expect(await store.takePressSnapshot(callId: "x2", profile: noCamera, feeds: feeds) == nil)
        #expect(await store.stats.captureFailures == 2)
        #expect(await store.stats.lastFailure == "the profile has no camera")
    }
}
