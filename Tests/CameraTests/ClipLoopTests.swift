import Camera
import CameraTestSupport
import Foundation
import Testing
import TestSupport

@Suite("H.264 clip loop", .serialized, .heavy)
struct ClipLoopTests {
    /// Encodes `count` test-pattern frames to an Annex-B byte stream with real x264enc (it blocks:
    /// callers run it `offThePool`).
    static func encodeClip(count: Int, width: Int, height: Int, options: String = "") throws -> [UInt8] {
        let caps = FrameCaps.caps(format: .i420, width: width, height: height, fps: 30)
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! x264enc tune=zerolatency speed-preset=ultrafast "
                + "key-int-max=15 bitrate=800 \(options) ! video/x-h264,stream-format=byte-stream,profile=constrained-baseline ! "
                + "appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        var generator = try TestPatternGenerator(width: width, height: height)
        for i in 0..<count {
            let frame = generator.nextFrame(unixMs: 1_000_000 + Int64(i), timestampNs: UInt64(i) * 33_333_333)
            try pipeline.push(frame.bytes, ptsNs: UInt64(i) * 33_333_333, durationNs: 33_333_333)
        }
        try pipeline.endOfStream()
        var out: [UInt8] = []
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) { out += sample.bytes }
        return out
    }

    static func nal(_ header: UInt8, _ body: [UInt8]) -> [UInt8] { [0, 0, 0, 1, header] + body }

    @Test("NAL units group into access units on AUD, parameter sets and first_mb_in_slice")
    func grouping() async throws {
        // A real SPS for 320x240 so the clip can read its size.
        let stream = try await offThePool { try Self.encodeClip(count: 1, width: 320, height: 240) }
        let units = H264AnnexB.nalUnits(stream)
        let sps = try #require(units.first { $0.type == 7 })
        let pps = try #require(units.first { $0.type == 8 })
        let spsBytes = [0, 0, 1] + Array(sps.bytes)  // 3-byte start code on purpose
        let ppsBytes = [0, 0, 0, 1] + Array(pps.bytes)
        var data: [UInt8] = [0x00]  // junk zero before the first start code
        data += Self.nal(0x09, [0xF0])  // AUD
        data += spsBytes + ppsBytes
        data += Self.nal(0x65, [0x88, 0x01])  // IDR, first_mb 0
        data += Self.nal(0x65, [0x40, 0x02])  // IDR, second slice (first_mb 1)
        data += Self.nal(0x09, [0xF0])  // AUD
        data += Self.nal(0x41, [0x9A, 0x03])  // P, first_mb 0
        data += Self.nal(0x41, [0x9A, 0x04])  // P, new picture without an AUD
        data += Self.nal(0x41, [0x40, 0x05])  //   its second slice
        data += Self.nal(0x06, [0x05, 0x01])  // SEI starts the next AU
        data += Self.nal(0x65, [0x88, 0x06])  // IDR without SPS/PPS in its AU
        let groups = H264AnnexB.accessUnits(H264AnnexB.nalUnits(data))
        #expect(groups.map { $0.map(\.type) } == [[9, 7, 8, 5, 5], [9, 1], [1, 1], [6, 5]])
        let clip = try H264Clip(annexB: data)
        #expect(clip.accessUnits.count == 4)
        #expect(clip.accessUnits.map(\.isKeyFrame) == [true, false, false, true])
        #expect(clip.width == 320 && clip.height == 240)
        // SPS and PPS were put back in front of the last IDR; AUDs are dropped.
        let last = H264AnnexB.nalUnits(clip.accessUnits[3].bytes).map(\.type)
        #expect(last == [7, 8, 6, 5])
        #expect(H264AnnexB.nalUnits(clip.accessUnits[0].bytes).map(\.type) == [7, 8, 5, 5])
        #expect(throws: CameraError.self) { try H264Clip(annexB: [1, 2, 3, 4]) }
        #expect(throws: CameraError.self) { try H264Clip(annexB: Self.nal(0x41, [0x9A])) }
    }

    @Test("a real x264 clip (multi-slice) parses into one access unit per frame, with its size and rate")
    func realClip() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc"]))
        let data = try await offThePool { try Self.encodeClip(count: 45, width: 320, height: 240, options: "sliced-threads=true threads=4") }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-clip-\(getpid()).h264").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(data)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let slices = H264AnnexB.nalUnits(data).filter(\.isVCL).count
        #expect(slices > 45)  // several slices per picture
        let clip = try H264Clip(contentsOfFile: path)
        #expect(clip.accessUnits.count == 45)
        #expect(clip.accessUnits.filter(\.isKeyFrame).count == 3)
        #expect(clip.width == 320 && clip.height == 240)
        #expect(clip.fps == 30)
        for unit in clip.accessUnits where unit.isKeyFrame {
            #expect(Array(H264AnnexB.nalUnits(unit.bytes).map(\.type).prefix(2)) == [7, 8])
        }
    }

    @Test("the loop is seamless: monotonic timestamps and counters across the boundary, and it decodes")
    func seamlessLoop() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "avdec_h264", "h264parse"]))
        let clip = try H264Clip(annexB: await offThePool { try Self.encodeClip(count: 20, width: 320, height: 240) })
        let source = try ClipLoopSource(clip: clip, fps: 200)
        let rec = EventRecorder()
        try source.start(rec.sink)
        #expect(await rec.waitForFrames(50))
        source.stop()
        let frames = Array(rec.frames.prefix(50))
        #expect(frames.map(\.sequence) == Array(0..<50))
        #expect(frames.map(\.timestampNs) == (0..<50).map { UInt64($0) * 5_000_000 })
        #expect(frames.allSatisfy { $0.format == .h264 && $0.width == 320 && $0.height == 240 })
        #expect(frames.filter(\.isKeyFrame).map(\.sequence) == [0, 15, 20, 35, 40])

        // Decode the looped stream: every picture decodes, in loop order (clip frame n % 20).
        let counters = try await StampDecoding.counters(frames, format: .h264, width: 320, height: 240, fps: 200)
        #expect(counters == (0..<50).map { UInt16($0 % 20) })
    }

    @Test("a camera's H.264 pass-through gets SPS/PPS in front of every IDR")
    func parameterSetsForPassThrough() async {
        var cache = H264ParameterSetCache()
        let sps = Self.nal(0x67, [0x42, 0xC0, 0x1E])
        let pps = Self.nal(0x68, [0xCE, 0x3C, 0x80])
        let first = cache.process(sps + pps + Self.nal(0x65, [0x88, 0x01]))
        #expect(first.isKeyFrame)
        #expect(H264AnnexB.nalUnits(first.bytes).map(\.type) == [7, 8, 5])
        let p = cache.process(Self.nal(0x41, [0x9A]))
        #expect(!p.isKeyFrame && H264AnnexB.nalUnits(p.bytes).map(\.type) == [1])
        let idr = cache.process(Self.nal(0x65, [0x88, 0x02]))
        #expect(idr.isKeyFrame)
        #expect(H264AnnexB.nalUnits(idr.bytes).map(\.type) == [7, 8, 5])
        #expect(Array(idr.bytes.prefix(8)) == [0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1E])
    }
}
