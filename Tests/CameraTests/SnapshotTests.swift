import Camera
import Foundation
import Testing
import TestSupport

@Suite("ipcemu snapshot", .serialized, .heavy)
struct SnapshotTests {
    @Test("a test-pattern snapshot is a valid JPEG whose stamp reads back")
    func jpegFromPattern() async throws {
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: ipcemu), "ipcemu not built at \(ipcemu)")
        let out = TestEnvironment.temporaryPath("snap.jpg")
        defer { try? FileManager.default.removeItem(atPath: out) }
        let before = Clocks.unixMs()
        let run = try await TestEnvironment.run(ipcemu, ["snapshot", out, "--camera", "test-pattern", "--size", "640x360", "--skip", "2"])
        let after = Clocks.unixMs()
        #expect(run.status == 0, "ipcemu snapshot failed: \(run.output)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(bytes.prefix(3) == [0xFF, 0xD8, 0xFF])
        #expect(bytes.suffix(2) == [0xFF, 0xD9])
        let picture = try Snapshot.decode(bytes, format: .jpeg)
        #expect(picture.width == 640 && picture.height == 360)
        let stamp = try picture.readStamp()
        #expect(stamp.counter == 2)  // frames 0 and 1 skipped
        let t = stamp.unixMs(near: before)
        #expect(t >= before && t <= after)
    }

    @Test("snapshot --profile uses the profile's camera at its stream's size, stamp intact")
    func fromProfile() async throws {
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: ipcemu), "ipcemu not built at \(ipcemu)")
        let profile = TestEnvironment.repositoryRoot.appendingPathComponent("device-profiles/doorbell.yaml").path
        for (stream, width, height) in [("main", 1280, 720), ("sub", 640, 360)] {
            let out = TestEnvironment.temporaryPath("profile-\(stream).jpg")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let run = try await TestEnvironment.run(ipcemu, ["snapshot", "--profile", profile, "--stream", stream, out])
            #expect(run.status == 0, "ipcemu snapshot failed: \(run.output)")
            let picture = try Snapshot.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: out))), format: .jpeg)
            #expect(picture.width == width && picture.height == height)
            #expect(try picture.readStamp().counter == 0)
        }
        let bad = try await TestEnvironment.run(ipcemu, ["snapshot", "--profile", "/nonexistent.yaml", TestEnvironment.temporaryPath("x.jpg")])
        #expect(bad.status != 0)
        #expect(bad.output.contains("/nonexistent.yaml"))
    }

    @Test("PNG by extension; a clip's snapshot decodes its first IDR")
    func pngAndClip() async throws {
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: ipcemu))
        let png = TestEnvironment.temporaryPath("snap.png")
        defer { try? FileManager.default.removeItem(atPath: png) }
        let run = try await TestEnvironment.run(ipcemu, ["snapshot", png, "--size", "320x240"])
        #expect(run.status == 0, "\(run.output)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(try Snapshot.decode(bytes, format: .png).readStamp().counter == 0)

        let clipPath = TestEnvironment.temporaryPath("clip.h264")
        let jpg = TestEnvironment.temporaryPath("clip.jpg")
        defer {
            try? FileManager.default.removeItem(atPath: clipPath)
            try? FileManager.default.removeItem(atPath: jpg)
        }
        let clip = try ClipLoopTests.encodeClip(count: 10, width: 320, height: 240)
        #expect(FileManager.default.createFile(atPath: clipPath, contents: Data(clip)))
        let clipRun = try await TestEnvironment.run(ipcemu, ["snapshot", jpg, "--camera", "clip:\(clipPath)"])
        #expect(clipRun.status == 0, "\(clipRun.output)")
        let picture = try Snapshot.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: jpg))), format: .jpeg)
        #expect(picture.width == 320)
        #expect(try picture.readStamp() == LatencyStamp(captureTimeMs: 1_000_000, counter: 0))
    }

    @Test("a missing camera fails with a clear message; a bad extension is refused")
    func failures() async throws {
        let ipcemu = TestEnvironment.product("ipcemu")
        try #require(FileManager.default.isExecutableFile(atPath: ipcemu))
        let out = TestEnvironment.temporaryPath("none.jpg")
        let run = try await TestEnvironment.run(ipcemu, ["snapshot", out, "--camera", "v4l2:/dev/video97", "--timeout", "0.5"])
        #expect(run.status != 0)
        #expect(run.output.contains("no camera at /dev/video97"))
        #expect(!FileManager.default.fileExists(atPath: out))
        let bad = try await TestEnvironment.run(ipcemu, ["snapshot", TestEnvironment.temporaryPath("x.gif")])
        #expect(bad.status != 0)
        #expect(bad.output.contains(".jpg, .jpeg or .png"))
        let badCamera = try await TestEnvironment.run(ipcemu, ["snapshot", out, "--camera", "webcam"])
        #expect(badCamera.status != 0)
        #expect(badCamera.output.contains("expected test-pattern, v4l2:/dev/videoN"))
    }
}
