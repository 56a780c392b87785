import CV4L2
import Camera
import CameraTestSupport
import Testing
import TestSupport

/// The V4L2 source against the fake driver behind the injectable ioctl table.
@Suite("V4L2 source (fake driver)")
struct V4L2SourceTests {
    static let sizes = [(640, 360), (1280, 720)]
    static let fastRetry = V4L2Source.Retry(initialDelayMs: 10, maximumDelayMs: 40, stallTimeoutMs: 1000)

    func source(_ fake: FakeV4L2, device: V4L2Source.Device = .path("/dev/video0"), format: PixelFormat? = nil)
        -> V4L2Source
    {
        V4L2Source(device: device, request: .init(width: 1280, height: 720, fps: 30, format: format),
                   bufferCount: 4, retry: Self.fastRetry, driver: fake.driver)
    }

    func camera(_ fourccs: [UInt32], path: String = "/dev/video0", card: String = "Fake Cam") -> FakeV4L2.Camera {
        FakeV4L2.Camera(path: path, card: card, offers: fourccs.map { .init(fourcc: $0, sizes: Self.sizes) })
    }

    @Test("a camera offering only MJPEG streams MJPEG, bytesused respected")
    func onlyMJPEG() async throws {
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_MJPEG])])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(5))
        src.stop()
        let frames = rec.frames
        #expect(frames.first?.format == .mjpeg)
        #expect(frames.first?.width == 1280 && frames.first?.height == 720)
        #expect(frames.first?.bytes.count == 7)
        #expect(frames.first?.bytes.prefix(2) == [0xFF, 0xD8])
        #expect(rec.statuses.first == .live(description: "/dev/video0 MJPEG 1280x720@30"))
        #expect(rec.statuses.last == .stopped)
    }

    @Test("a camera offering only YUYV streams whole YUYV frames")
    func onlyYUYV() async throws {
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_YUYV])])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(3))
        src.stop()
        let frame = try #require(rec.frames.first)
        #expect(frame.format == .yuyv)
        #expect(frame.bytes.count == 2 * 1280 * 720)
        #expect(frame.bytes.allSatisfy { $0 == frame.bytes[0] })
    }

    @Test("H.264 pass-through when asked; MJPEG before YUYV otherwise")
    func h264WhenAsked() async throws {
        let offers = [CV4L2_PIX_FMT_YUYV, CV4L2_PIX_FMT_H264, CV4L2_PIX_FMT_MJPEG]
        let fake = FakeV4L2([camera(offers)])
        let asked = source(fake, format: .h264)
        let rec = EventRecorder()
        try asked.start(rec.sink)
        #expect(await rec.waitForFrames(12))
        asked.stop()
        let frames = rec.frames
        #expect(frames.allSatisfy { $0.format == .h264 })
        #expect(frames.first?.isKeyFrame == true)
        #expect(frames.filter(\.isKeyFrame).count >= 1 && frames.filter(\.isKeyFrame).count < frames.count)

        let fake2 = FakeV4L2([camera(offers)])
        let auto = source(fake2)
        let rec2 = EventRecorder()
        try auto.start(rec2.sink)
        #expect(await rec2.waitForFrames(2))
        auto.stop()
        #expect(rec2.frames.first?.format == .mjpeg)
    }

    @Test("buffers: 4 requested, all queued before STREAMON, each dequeued in order and requeued at once")
    func bufferQueueing() async throws {
        let startedMs = Clocks.unixMs()
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_YUYV])])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(10))
        src.stop()
        let log = fake.log("/dev/video0")
        let on = try #require(log.firstIndex(of: "STREAMON"))
        #expect(log.contains("REQBUFS 4"))
        #expect(Array(log[..<on].filter { $0.hasPrefix("QBUF") }) == ["QBUF 0", "QBUF 1", "QBUF 2", "QBUF 3"])
        let after = Array(log[(on + 1)...].filter { $0.hasPrefix("DQBUF") || $0.hasPrefix("QBUF") }.prefix(16))
        var expected: [String] = []
        for i in 0..<8 { expected += ["DQBUF \(i % 4)", "QBUF \(i % 4)"] }
        #expect(after == expected)
        // Stopping released everything: stream off, buffers unmapped, device closed.
        #expect(log.contains("STREAMOFF"))
        #expect(fake.mapped == 0)
        #expect(fake.openCount == 0)
        // Sequence numbers count from 0 with no gap; timestamps are real and increasing.
        let frames = rec.frames
        #expect(frames.map(\.sequence) == Array(0..<UInt64(frames.count)))
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNs < $1.timestampNs })
        let now = Clocks.unixMs()
        #expect(frames.allSatisfy { $0.captureTimeMs >= startedMs - 1_000 && $0.captureTimeMs <= now + 1_000 },
                "capture times outside the test's own run (\(startedMs)...\(now))")
    }

    @Test("frames the driver dropped still count in the sequence")
    func driverDropsCount() async throws {
        let cam = camera([CV4L2_PIX_FMT_YUYV])
        cam.dropSequences = [3, 4]
        let fake = FakeV4L2([cam])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(6))
        src.stop()
        #expect(Array(rec.frames.map(\.sequence).prefix(6)) == [0, 1, 2, 5, 6, 7])
    }

    @Test("EBUSY at open: no video with a clear reason, then live once the camera is free")
    func busyAtOpen() async throws {
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_YUYV])])
        fake.setBusy("/dev/video0", true)
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.wait { events in events.contains { if case .status(.noVideo) = $0 { return true } else { return false } } })
        guard case .noVideo(let reason) = rec.statuses.first else {
            Issue.record("first status should be no video, was \(rec.statuses)")
            src.stop()
            return
        }
        #expect(reason.contains("busy"))
        #expect(rec.frames.isEmpty)
        fake.setBusy("/dev/video0", false)
        #expect(await rec.waitForFrames(3))
        src.stop()
        #expect(rec.statuses.contains { if case .live = $0 { return true } else { return false } })
    }

    @Test("ENODEV mid-stream: no video, retries, and picks the camera up again when it returns")
    func unplugAndReturn() async throws {
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_YUYV])])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(5))
        fake.unplug("/dev/video0")
        #expect(await rec.wait { events in events.contains { if case .status(.noVideo) = $0 { return true } else { return false } } })
        let before = rec.frames.count
        // Still unplugged: two more retries find nothing (and do not repeat the same status).
        let attempts = fake.openAttempts
        #expect(await eventually { fake.openAttempts >= attempts + 2 })
        #expect(rec.frames.count == before)
        fake.plug("/dev/video0")
        #expect(await rec.waitForFrames(before + 5))
        src.stop()
        let statuses = rec.statuses
        let reasons = statuses.compactMap { if case .noVideo(let r) = $0 { return r } else { return nil } }
        #expect(reasons.first?.contains("went away") == true)
        #expect(statuses.filter { if case .live = $0 { return true } else { return false } }.count == 2)
        #expect(statuses.last == .stopped)
        let frames = rec.frames
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.sequence < $1.sequence && $0.timestampNs < $1.timestampNs })
        #expect(fake.openCount == 0)
    }

    @Test("a missing camera reports no video, then appears")
    func missingThenPresent() async throws {
        let cam = camera([CV4L2_PIX_FMT_MJPEG])
        cam.present = false
        let fake = FakeV4L2([cam])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.wait { !$0.isEmpty })
        #expect(rec.statuses.first == .noVideo(reason: "no camera at /dev/video0"))
        fake.plug("/dev/video0")
        #expect(await rec.waitForFrames(2))
        src.stop()
    }

    @Test("open by card name scans the nodes and leaves the others closed")
    func openByName() async throws {
        let fake = FakeV4L2([
            camera([CV4L2_PIX_FMT_YUYV], path: "/dev/video0", card: "Integrated Camera"),
            camera([CV4L2_PIX_FMT_MJPEG], path: "/dev/video2", card: "HD Pro Webcam C920"),
        ])
        let src = source(fake, device: .name("c920"))
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(2))
        #expect(fake.openCount == 1)
        src.stop()
        #expect(rec.frames.first?.format == .mjpeg)
        #expect(fake.log("/dev/video2").contains("STREAMON"))
        #expect(!fake.log("/dev/video0").contains("STREAMON"))

        let missing = source(fake, device: .name("nonexistent"))
        let rec2 = EventRecorder()
        try missing.start(rec2.sink)
        #expect(await rec2.wait { !$0.isEmpty })
        missing.stop()
        #expect(rec2.statuses.first == .noVideo(reason: "no camera at camera named \"nonexistent\""))
    }

    @Test("the inventory lists formats, sizes and rates")
    func inventory() async {
        let fake = FakeV4L2([camera([CV4L2_PIX_FMT_MJPEG, CV4L2_PIX_FMT_YUYV])])
        let devices = V4L2Inventory.scan(driver: fake.driver)
        #expect(devices.count == 1)
        let text = V4L2Inventory.render(devices)
        #expect(text.contains("/dev/video0: \"Fake Cam\" (driver fake"))
        #expect(text.contains("MJPG fake MJPG -> MJPEG"))
        #expect(text.contains("1280x720 @ 30, 15 fps"))
        #expect(V4L2Inventory.render([]).contains("No V4L2 devices"))
    }
}

@Suite("V4L2 format negotiation")
struct V4L2NegotiationTests {
    func offer(_ code: UInt32, _ sizes: [(Int, Int, [Double])], emulated: Bool = false) -> V4L2FormatInfo {
        V4L2FormatInfo(
            fourcc: code, name: fourCCString(code), flags: emulated ? CV4L2_FMT_FLAG_EMULATED : 0,
            sizes: .discrete(sizes.map {
                .init(width: $0.0, height: $0.1,
                      rates: .discrete($0.2.map { V4L2Interval(numerator: 1, denominator: UInt32($0)) }))
            }))
    }

    @Test func prefersExactSizeThenRateThenFormat() {
        let yuyv = offer(CV4L2_PIX_FMT_YUYV, [(640, 480, [30]), (1280, 720, [10])])
        let mjpeg = offer(CV4L2_PIX_FMT_MJPEG, [(640, 480, [30]), (1280, 720, [30])])
        let request = V4L2Negotiation.Request(width: 1280, height: 720, fps: 30)
        let choice = V4L2Negotiation.choose(from: [yuyv, mjpeg], request: request)
        #expect(choice?.format == .mjpeg && choice?.width == 1280 && choice?.fps == 30)
        // Only YUYV at 10 fps there: take it, at its best rate.
        let only = V4L2Negotiation.choose(from: [yuyv], request: request)
        #expect(only?.format == .yuyv && only?.width == 1280 && only?.fps == 10)
        // Closest size when the exact one is missing.
        let small = V4L2Negotiation.choose(from: [offer(CV4L2_PIX_FMT_YUYV, [(320, 240, [30]), (800, 600, [30])])], request: request)
        #expect(small?.width == 800)
        // libv4l2's converted formats only when nothing native fits.
        let emulated = offer(CV4L2_PIX_FMT_YUV420, [(1280, 720, [30])], emulated: true)
        #expect(V4L2Negotiation.choose(from: [emulated, yuyv], request: request)?.format == .yuyv)
        #expect(V4L2Negotiation.choose(from: [emulated], request: request)?.format == .i420)
        // H.264 only when asked.
        let h264 = offer(CV4L2_PIX_FMT_H264, [(1280, 720, [30])])
        #expect(V4L2Negotiation.choose(from: [h264, yuyv], request: request)?.format == .yuyv)
        var asked = request
        asked.format = .h264
        #expect(V4L2Negotiation.choose(from: [yuyv, mjpeg, h264], request: asked)?.format == .h264)
        // H.265 (V4L2 HEVC) likewise: only when asked, then above everything else.
        let hevc = offer(CV4L2_PIX_FMT_HEVC, [(1280, 720, [30])])
        #expect(V4L2Negotiation.choose(from: [hevc, yuyv], request: request)?.format == .yuyv)
        #expect(V4L2Negotiation.choose(from: [hevc], request: request) == nil)
        asked.format = .h265
        #expect(V4L2Negotiation.choose(from: [yuyv, mjpeg, h264, hevc], request: asked)?.format == .h265)
        #expect(V4L2Negotiation.choose(from: [offer(fourCC("RGB3"), [(1280, 720, [30])])], request: request) == nil)
    }
}
