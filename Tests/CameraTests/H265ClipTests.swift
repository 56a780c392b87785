import Camera
import CameraTestSupport
import Foundation
import Testing
import TestSupport

@Suite("H.265 clip pass-through", .serialized, .heavy)
struct H265ClipTests {
    static func types(_ bytes: [UInt8]) -> [UInt8] {
        H264AnnexB.nalUnits(bytes).map { ($0.bytes[$0.bytes.startIndex] >> 1) & 0x3F }
    }

    static func nal(_ type: UInt8, _ body: [UInt8]) -> [UInt8] { [0, 0, 0, 1, type << 1, 0x01] + body }

    @Test("a real x265 clip: one access unit per frame, key frames with VPS/SPS/PPS, codec sniffed")
    func realClip() async throws {
        try #require(GStreamerPipeline.hasElements(["x265enc", "h265parse"]))
        let data = try await H265ClipEncoder.encode(count: 30, width: 320, height: 180)
        #expect(H265Clip.looksLikeH265(data))
        let clip = try H265Clip(annexB: data)
        #expect(clip.accessUnits.count == 30)
        #expect(clip.accessUnits.filter(\.isKeyFrame).count >= 2)
        #expect(clip.accessUnits.first?.isKeyFrame == true)
        for unit in clip.accessUnits where unit.isKeyFrame {
            #expect(Array(Self.types(unit.bytes).prefix(3)) == [32, 33, 34])
        }
        // An H.264 stream is not taken for H.265.
        #expect(!H265Clip.looksLikeH265([0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE]))
        #expect(!H265Clip.looksLikeH265([0, 0, 0, 1, 0x09, 0xF0]))
    }

    @Test("parameter sets sent once at the start are put before every key frame; AUDs and leading pictures go")
    func prependsParameterSets() async throws {
        var data: [UInt8] = []
        data += Self.nal(1, [0x80, 0x01])  // a picture before the first key frame: skipped
        data += Self.nal(35, [0x10])  // AUD
        data += Self.nal(32, [0x0C]) + Self.nal(33, [0x01]) + Self.nal(34, [0xC1])
        data += Self.nal(19, [0x80, 0x02])  // IDR_W_RADL, first slice
        data += Self.nal(19, [0x40, 0x03])  //   its second slice
        data += Self.nal(1, [0x80, 0x04])  // TRAIL_R, a new picture without an AUD
        data += Self.nal(39, [0x05])  // prefix SEI starts the next access unit
        data += Self.nal(21, [0x80, 0x06])  // CRA without parameter sets
        let clip = try H265Clip(annexB: data, name: "t.h265")
        #expect(clip.accessUnits.map(\.isKeyFrame) == [true, false, true])
        #expect(clip.accessUnits.map { Self.types($0.bytes) } == [[32, 33, 34, 19, 19], [1], [32, 33, 34, 39, 21]])
    }

    @Test("bad files are clear errors naming the file: garbage, truncated, no key frame, missing, H.264")
    func badFiles() async throws {
        func message(_ body: () throws -> H265Clip) -> String {
            do { _ = try body(); return "" } catch { return "\(error)" }
        }
        #expect(message { try H265Clip(annexB: [1, 2, 3, 4, 5], name: "junk.h265") }.contains("junk.h265 holds no NAL units"))
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let junk = (0..<Int.random(in: 0..<2000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(message { try H265Clip(annexB: junk, name: "r.h265") }.contains("r.h265"))
        }
        #expect(message { try H265Clip(annexB: Self.nal(1, [0x80]), name: "p.h265") }.contains("no H.265 key frame"))
        #expect(message { try H265Clip(annexB: Self.nal(19, [0x80]), name: "k.h265") }.contains("key frame before any VPS/SPS/PPS"))
        #expect(message { try H265Clip(annexB: [0, 0, 1, 0x80, 0x01, 0x80], name: "f.h265") }.contains("bad H.265 header"))
        #expect(message { try H265Clip(contentsOfFile: "/nonexistent/x.h265") }.contains("cannot read /nonexistent/x.h265"))

        try #require(GStreamerPipeline.hasElements(["x265enc", "h265parse"]))
        let data = try await H265ClipEncoder.encode(count: 30, width: 320, height: 180)
        // Every cut of a real clip either parses (a prefix holding a key frame) or is an error.
        for cut in stride(from: 0, to: data.count, by: max(1, data.count / 97)) {
            if let clip = try? H265Clip(annexB: Array(data.prefix(cut)), name: "cut.h265") {
                #expect(clip.accessUnits.first?.isKeyFrame == true)
            }
        }
        // The camera factory picks the parser by extension; an H.264 file named .h265 fails clearly.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-h264-as-\(getpid()).h265").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data([0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x65, 0x88])))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let config = CameraConfig(kind: .clip(path: path), width: 320, height: 180, fps: 15)
        do {
            _ = try config.makeSource()
            Issue.record("an H.264 file named .h265 made a source")
        } catch {
            #expect(error.description.contains(path))
        }
    }

    @Test("the looped H.265 clip is paced, counts on across the loop, and every frame decodes with its stamp")
    func loopDecodes() async throws {
        try #require(GStreamerPipeline.hasElements(["x265enc", "h265parse", "avdec_h265"]))
        let data = try await H265ClipEncoder.encode(count: 20, width: 320, height: 180, keyInterval: 10)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-clip-\(getpid()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(data)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try CameraConfig.clipIsH265(path))  // sniffed: the name says nothing
        let source = try CameraConfig(kind: .clip(path: path), width: 320, height: 180, fps: 200).makeSource()
        #expect(source.name.hasPrefix("H.265 clip"))
        let rec = EventRecorder()
        try source.start(rec.sink)
        #expect(await rec.waitForFrames(50))
        source.stop()
        let frames = Array(rec.frames.prefix(50))
        #expect(frames.map(\.sequence) == Array(0..<50))
        #expect(frames.allSatisfy { $0.format == .h265 })
        #expect(Set([0, 10, 20, 30, 40]).isSubset(of: Set(frames.filter(\.isKeyFrame).map(\.sequence))))

        let counters = try await StampDecoding.counters(frames, format: .h265, width: 320, height: 180, fps: 200)
        #expect(counters == (0..<50).map { UInt16($0 % 20) })
    }
}
