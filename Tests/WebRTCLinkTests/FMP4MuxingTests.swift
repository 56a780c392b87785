import Foundation
import IPCWire
import Testing
import TestSupport
@testable import WebRTCLink

/// PROTOCOL.md 7: real x265 access units through the fMP4 writer, the framing, and back; the
/// written MP4 is also read by GStreamer's qtdemux (an independent parser) and decoded.
@Suite("fMP4 muxing of H.265 for the fmp4Stream channel", .serialized, .heavy)
struct FMP4MuxingTests {
    /// `count` access units of x265 (Annex B, VPS/SPS/PPS before each key frame), key every 5.
    static func encodedAccessUnits(count: Int, width: Int = 320, height: Int = 240) async throws -> [[UInt8]] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-hevc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try await run("gst-launch-1.0", [
            "-q", "videotestsrc", "num-buffers=\(count)", "!",
            "video/x-raw,format=I420,width=\(width),height=\(height),framerate=30/1", "!",
            "x265enc", "tune=zerolatency", "speed-preset=ultrafast", "key-int-max=5", "option-string=repeat-headers=1:bframes=0", "!",
            "h265parse", "config-interval=-1", "!", "video/x-h265,stream-format=byte-stream,alignment=au", "!",
            "multifilesink", "location=\(dir.path)/au-%05d.h265", "next-file=buffer",
        ])
        return try (0..<count).map { i in
            try [UInt8](Data(contentsOf: dir.appendingPathComponent(String(format: "au-%05d.h265", i))))
        }
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) async throws -> Int32 {
        try await runProgram("/usr/bin/env", [tool] + arguments, discardStderr: true).status
    }

    @Test func parameterSetsGiveTheSizeAndARecordThatReadsBack() async throws {
        let units = try await Self.encodedAccessUnits(count: 1, width: 320, height: 240)
        let sample = try HEVCSample(annexB: units[0])
        #expect(sample.isKeyFrame)
        let vps = try #require(sample.vps), sps = try #require(sample.sps), pps = try #require(sample.pps)
        let sets = try HEVCParameterSets(vps: vps, sps: sps, pps: pps)
        #expect(sets.info.width == 320 && sets.info.height == 240)
        #expect(sets.info.chromaFormat == 1 && sets.info.bitDepthLumaMinus8 == 0)
        let record = sets.decoderConfigurationRecord
        #expect(record[0] == 1 && record[22] == 3)
        #expect(try HEVCParameterSets(decoderConfigurationRecord: record) == sets)
    }

    @Test func oneAccessUnitPerSegmentThroughFramingAndBack() async throws {
        let units = try await Self.encodedAccessUnits(count: 12)
        var muxer = FMP4StreamMuxer(fps: 30)
        var messages: [[UInt8]] = []
        for (i, unit) in units.enumerated() {
            messages += muxer.messages(forAccessUnit: unit, timeNanos: UInt64(i) * 33_333_333)
        }
        #expect(muxer.stats.initializationSegments == 1 && muxer.stats.mediaSegments == 12 && muxer.stats.refused == 0)
        #expect(messages.allSatisfy { $0.count <= 16 * 1024 })
        #expect(Array(messages[0].prefix(4)) == [0, 1, 1, 1])  // init: kind 0, number 1, one fragment
        #expect(messages[1][0] == 1 && messages[1][1] == 2 && messages[1][3] == 1)  // first media: number 2

        var reassembler = FMP4Reassembler()
        var depacketizer = FMP4Depacketizer()
        var decoded: [[UInt8]] = []
        var keys: [Bool] = []
        var times: [UInt64] = []
        for message in messages {
            guard let segment = try reassembler.accept(message) else { continue }
            if let (unit, media) = try depacketizer.take(segment.bytes, isInitialization: segment.kind == .initialization) {
                decoded.append(unit)
                keys.append(media.isKeyFrame)
                times.append(media.decodeTime)
            }
        }
        #expect(decoded.count == 12)
        #expect(keys == (0..<12).map { $0 % 5 == 0 })
        #expect(times[0] == 0 && abs(Int(times[1]) - 3_000) <= 1 && abs(Int(times[11]) - 33_000) <= 1)
        #expect(depacketizer.initialization?.width == 320 && depacketizer.initialization?.sampleEntry == "hvc1")
        #expect(reassembler.stats.segmentNumberGaps == 0 && reassembler.stats.errors == 0)
        // The picture NAL units come back as they were sent.
        for (original, back) in zip(units, decoded) {
            let picture = { (au: [UInt8]) in HEVCAnnexB.nalUnits(au).filter { (HEVCNALType.of($0) ?? 99) < 32 }.map(Array.init) }
            #expect(picture(original) == picture(back))
        }
    }

    @Test func qtdemuxReadsTheSegmentsAndTheDecoderGivesEveryFrame() async throws {
        let units = try await Self.encodedAccessUnits(count: 10)
        var muxer = FMP4StreamMuxer(fps: 30)
        var file: [UInt8] = []
        var reassembler = FMP4Reassembler()
        for (i, unit) in units.enumerated() {
            for message in muxer.messages(forAccessUnit: unit, timeNanos: UInt64(i) * 33_333_333) {
                if let segment = try reassembler.accept(message) { file += segment.bytes }
            }
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-fmp4-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let mp4 = dir.appendingPathComponent("stream.mp4")
        try Data(file).write(to: mp4)
        let status = try await Self.run("gst-launch-1.0", [
            "-q", "filesrc", "location=\(mp4.path)", "!", "qtdemux", "!", "h265parse", "!", "avdec_h265", "!",
            "videoconvert", "!", "video/x-raw,format=I420", "!",
            "multifilesink", "location=\(dir.path)/frame-%05d.yuv",
        ])
        #expect(status == 0)
        let frames = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("frame-") }
        #expect(frames.count == 10)
        let size = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("frame-00000.yuv").path)[.size] as? Int
        #expect(size == 320 * 240 * 3 / 2)
    }

    @Test func aSizeChangeSendsANewInitializationSegmentAtTheKeyFrame() async throws {
        let small = try await Self.encodedAccessUnits(count: 3, width: 320, height: 240)
        let large = try await Self.encodedAccessUnits(count: 3, width: 640, height: 360)
        var muxer = FMP4StreamMuxer(fps: 30)
        // Deltas before the first key frame are skipped.
        #expect(muxer.messages(forAccessUnit: small[1], timeNanos: 0).isEmpty)
        var headers: [[UInt8]] = []
        for (i, unit) in (small + large).enumerated() {
            headers += muxer.messages(forAccessUnit: unit, timeNanos: UInt64(i) * 33_333_333).filter { $0[3] == 1 }.map { Array($0.prefix(2)) }
        }
        #expect(headers == [[0, 1], [1, 2], [1, 3], [1, 4], [0, 1], [1, 2], [1, 3], [1, 4]])
        #expect(muxer.current?.info.width == 640 && muxer.stats.skippedWaitingForKeyFrame == 1)
    }

    @Test func mediaSegmentNumbersWrapModulo256WithoutANewInitSegment() async throws {
        let units = try await Self.encodedAccessUnits(count: 10)
        var muxer = FMP4StreamMuxer(fps: 30)
        var reassembler = FMP4Reassembler()
        var numbers: [UInt8] = []
        for i in 0..<300 {
            for message in muxer.messages(forAccessUnit: units[i % units.count], timeNanos: UInt64(i) * 33_333_333) {
                if let segment = try reassembler.accept(message) { numbers.append(segment.number) }
            }
        }
        #expect(muxer.stats.initializationSegments == 1 && numbers.count == 301)
        #expect(Array(numbers.prefix(3)) == [1, 2, 3])
        #expect(Array(numbers[253...257]) == [254, 255, 0, 1, 2])
        #expect(reassembler.stats.segmentNumberGaps == 0 && reassembler.stats.initializationSegments == 1)
    }

    @Test func badSegmentsAreErrorsNotCrashes() async throws {
        var depacketizer = FMP4Depacketizer()
        #expect(throws: HEVCError.self) { try depacketizer.take([1, 2, 3], isInitialization: false) }
        #expect(throws: HEVCError.self) { try depacketizer.take([0, 0, 0, 8, 0x66, 0x74, 0x79, 0x70], isInitialization: true) }
        let units = try await Self.encodedAccessUnits(count: 2)
        var muxer = FMP4StreamMuxer(fps: 30)
        let segments = units.enumerated().flatMap { muxer.messages(forAccessUnit: $1, timeNanos: UInt64($0)) }.map { Array($0.dropFirst(4)) }
        _ = try depacketizer.take(segments[0], isInitialization: true)
        // Every truncation of a media segment and of the init segment is refused cleanly.
        for cut in stride(from: 0, to: segments[1].count - 1, by: 97) {
            var copy = depacketizer
            #expect(throws: HEVCError.self) { try copy.take(Array(segments[1].prefix(cut)), isInitialization: false) }
        }
        for cut in 0..<(segments[0].count - 1) {
            var copy = depacketizer
            #expect(throws: HEVCError.self) { try copy.take(Array(segments[0].prefix(cut)), isInitialization: true) }
        }
        // Random corruption never traps.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var bytes = Bool.random(using: &generator) ? segments[0] : segments[1]
            for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            var copy = depacketizer
            _ = try? copy.take(bytes, isInitialization: bytes.count == segments[0].count)
        }
        #expect(throws: HEVCError.self) { try HEVCSample(annexB: [0, 0, 1, 0x40, 1]) }
        #expect(throws: HEVCError.self) { try HEVCSequenceInfo(sps: [0x42, 1, 1]) }
    }
}
