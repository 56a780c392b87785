import CV4L2
import Camera
import CameraTestSupport
import Foundation
import Testing
import TestSupport

/// An H.265 V4L2 camera passed through (PROTOCOL.md 7): the source against the fake driver behind
/// the injectable ioctl table, with hand-made NAL units and real x265 access units.
@Suite("V4L2 H.265 camera (fake driver)")
struct V4L2H265Tests {
    static let fastRetry = V4L2Source.Retry(initialDelayMs: 10, maximumDelayMs: 40, stallTimeoutMs: 1000)

    static func nal(_ type: UInt8, _ body: [UInt8]) -> [UInt8] { [0, 0, 0, 1, type << 1, 0x01] + body }

    static func types(_ bytes: [UInt8]) -> [UInt8] {
        H264AnnexB.nalUnits(bytes).map { ($0.bytes[$0.bytes.startIndex] >> 1) & 0x3F }
    }

    static let parameterSets = nal(32, [0x0C]) + nal(33, [0x01]) + nal(34, [0xC1])

    func source(_ fake: FakeV4L2, format: PixelFormat? = .h265) -> V4L2Source {
        V4L2Source(device: .path("/dev/video0"), request: .init(width: 320, height: 180, fps: 15, format: format),
                   bufferCount: 4, retry: Self.fastRetry, driver: fake.driver)
    }

    func camera(payloads: [[UInt8]]) -> FakeV4L2.Camera {
        let cam = FakeV4L2.Camera(path: "/dev/video0", card: "Fake HEVC Cam", offers: [
            .init(fourcc: CV4L2_PIX_FMT_MJPEG, sizes: [(320, 180)]),
            .init(fourcc: CV4L2_PIX_FMT_HEVC, sizes: [(320, 180)]),
            .init(fourcc: CV4L2_PIX_FMT_YUYV, sizes: [(320, 180)]),
        ])
        cam.payloads = payloads
        return cam
    }

    @Test("the assembler: sets-only buffers, pictures before a key frame, AUDs, two access units in a buffer", .heavy)
    func assembler() async throws {
        var a = H265BufferAssembler()
        #expect(try a.accessUnits(in: Self.nal(1, [0x80, 0x01])).isEmpty)  // no key frame yet
        #expect(try a.accessUnits(in: Self.nal(19, [0x80, 0x02])).isEmpty)  // key frame, no parameter sets yet
        #expect(a.skippedBeforeKeyFrame == 2)
        #expect(try a.accessUnits(in: Self.parameterSets).isEmpty)  // remembered, nothing to send
        let two = try a.accessUnits(in: Self.nal(35, [0x10]) + Self.nal(20, [0x80, 0x03]) + Self.nal(1, [0x80, 0x04]))
        #expect(two.map(\.isKeyFrame) == [true, false])
        #expect(two.map { Self.types($0.bytes) } == [[32, 33, 34, 20], [1]])
        // A reserved IRAP type (22) is a key frame; sets it brings itself come first, in order.
        let cra = try a.accessUnits(in: Self.nal(39, [0x05]) + Self.nal(34, [0xC2]) + Self.nal(22, [0x80, 0x06]))
        try #require(cra.count == 1)
        #expect(cra[0].isKeyFrame)
        #expect(Self.types(cra[0].bytes) == [32, 33, 34, 39, 22])
        #expect(H264AnnexB.nalUnits(cra[0].bytes)[2].bytes.last == 0xC2)  // the new PPS, not the old one
        // Bad buffers are typed errors and change nothing.
        #expect(throws: H265BufferAssembler.Failure.noNALUnits(bytes: 5)) { try a.accessUnits(in: [1, 2, 3, 4, 5]) }
        #expect(throws: H265BufferAssembler.Failure.badNALHeader(index: 0)) { try a.accessUnits(in: [0, 0, 1, 0x80, 0x01, 0x80]) }
        #expect(throws: H265BufferAssembler.Failure.badNALHeader(index: 1)) { try a.accessUnits(in: Self.nal(1, [0x80]) + [0, 0, 1, 0x40]) }
        #expect(throws: H265BufferAssembler.Failure.badNALHeader(index: 0)) { try a.accessUnits(in: [0, 0, 1, 0x02, 0x00, 0x80]) }
        #expect(throws: H265BufferAssembler.Failure.noNALUnits(bytes: 0)) { try a.accessUnits(in: []) }
        // Random bytes never trap: each buffer is an error or access units (CPU-bound, on a thread
        // of its own rather than a cooperative one).
        let assembler = a
        await offThePool {
            var a = assembler
            var random = SystemRandomNumberGenerator()
            for i in 0..<2000 {
                var junk = (0..<Int.random(in: 0..<600, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if i % 2 == 0 { junk = [0, 0, 1] + junk }
                _ = try? a.accessUnits(in: junk)
            }
        }
    }

    @Test("garbage buffers from the camera are skipped and counted; the stream goes on with its key frames")
    func garbageBuffers() async throws {
        let payloads: [[UInt8]] = [
            Self.nal(1, [0x80, 0x01]),  // a picture before any key frame: not sent
            [1, 2, 3, 4, 5],  // no start code
            Self.parameterSets,  // parameter sets in a buffer of their own
            Self.nal(19, [0x80, 0x02]),  // IDR: the sets go in front
            [0, 0, 1, 0x80, 0x01, 0x80],  // forbidden bit
            Self.nal(1, [0x80, 0x03]),
            [0, 0, 1, 0x40],  // a one-byte NAL unit
            Self.nal(21, [0x80, 0x04]),  // CRA without sets: the remembered ones go in front
            [0, 0, 1, 0x02, 0x00, 0x80],  // nuh_temporal_id_plus1 0
            Self.nal(1, [0x80, 0x05]),
        ]
        let fake = FakeV4L2([camera(payloads: payloads)])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(4))
        src.stop()
        let frames = Array(rec.frames.prefix(4))
        #expect(frames.allSatisfy { $0.format == .h265 && $0.width == 320 && $0.height == 180 })
        #expect(frames.map(\.isKeyFrame) == [true, false, true, false])
        #expect(frames.map { Self.types($0.bytes) } == [[32, 33, 34, 19], [1], [32, 33, 34, 21], [1]])
        // Each garbage buffer is a lost frame: the sequence shows the gaps.
        #expect(frames.map(\.sequence) == [1, 3, 5, 7])
        let skipped = src.skippedBuffers
        #expect(skipped.count >= 4)
        #expect(skipped.lastReason?.hasPrefix("/dev/video0: an H.265 buffer") == true, "\(skipped)")
        #expect(rec.statuses.first == .live(description: "/dev/video0 H265 320x180@15"))
        #expect(fake.openCount == 0)
    }

    @Test("not asked for, an HEVC camera's other formats win (H.265 only when asked)")
    func onlyWhenAsked() async throws {
        let fake = FakeV4L2([camera(payloads: [])])
        let src = source(fake, format: nil)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(2))
        src.stop()
        #expect(rec.frames.first?.format == .mjpeg)
        #expect(V4L2Inventory.render(V4L2Inventory.scan(driver: fake.driver)).contains("HEVC fake HEVC -> H265"))
    }

    @Test("real x265 access units: parameter sets before every key frame, key flags from the NAL types, every stamp decodes",
          .heavy, .timeLimit(.minutes(8)))
    func realAccessUnits() async throws {
        try #require(GStreamerPipeline.hasElements(["x265enc", "h265parse", "avdec_h265"]))
        let encoded = try await H265ClipEncoder.encodeAccessUnits(count: 45, width: 320, height: 180, fps: 15, keyInterval: 10)
        try #require(encoded.count == 45)
        // The camera sends its parameter sets once, in a buffer of their own, then pictures only.
        func isSet(_ unit: H264AnnexB.NALUnit) -> Bool { (32...34).contains((unit.bytes[unit.bytes.startIndex] >> 1) & 0x3F) }
        let first = H264AnnexB.nalUnits(encoded[0])
        let sets = H264AnnexB.annexB(first.filter(isSet))
        try #require(Self.types(sets) == [32, 33, 34])
        let pictures = encoded.map { H264AnnexB.annexB(H264AnnexB.nalUnits($0).filter { !isSet($0) }) }
        let fake = FakeV4L2([camera(payloads: [sets] + pictures)])
        let src = source(fake)
        let rec = EventRecorder()
        try src.start(rec.sink)
        #expect(await rec.waitForFrames(45, seconds: 20))
        src.stop()
        let frames = Array(rec.frames.prefix(45))
        try #require(frames.count == 45)
        #expect(src.skippedBuffers.count == 0)
        #expect(frames.map(\.sequence) == Array(0..<45))
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNs < $1.timestampNs })
        var keys = 0
        func isAUD(_ unit: H264AnnexB.NALUnit) -> Bool { (unit.bytes[unit.bytes.startIndex] >> 1) & 0x3F == 35 }
        for (frame, picture) in zip(frames, pictures) {
            let types = Self.types(frame.bytes)
            let irap = types.contains { (16...23).contains($0) }
            #expect(frame.isKeyFrame == irap)
            if irap {
                keys += 1
                #expect(Array(types.prefix(3)) == [32, 33, 34])
                #expect(Array(frame.bytes.prefix(sets.count)) == sets)
            } else {
                #expect(!types.contains { (32...34).contains($0) })
            }
            // The picture's own NAL units are passed through unchanged.
            #expect(H264AnnexB.nalUnits(frame.bytes).filter { !isSet($0) }.map { Array($0.bytes) }
                    == H264AnnexB.nalUnits(picture).filter { !isAUD($0) }.map { Array($0.bytes) })
        }
        let irapPictures = pictures.filter { Self.types($0).contains { (16...23).contains($0) } }.count
        #expect(keys == irapPictures && keys >= 5)  // at least frames 0, 10, 20, 30, 40
        #expect(frames.first?.isKeyFrame == true)

        // Every frame decodes, with its stamp; decoding from a later key frame works too.
        func counters(_ frames: ArraySlice<Frame>) async throws -> [UInt16] {
            try await StampDecoding.counters(frames, format: .h265, width: 320, height: 180, fps: 15)
        }
        #expect(try await counters(frames[...]) == (0..<45).map { UInt16($0) })
        let later = try #require(frames.indices.first(where: { $0 >= 15 && frames[$0].isKeyFrame }))
        #expect(try await counters(frames[later...]) == (later..<45).map { UInt16($0) })
    }
}
