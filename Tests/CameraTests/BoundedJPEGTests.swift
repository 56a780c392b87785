import Camera
import Foundation
import Testing
import TestSupport

/// PROTOCOL.md 8.5: a press snapshot is one JPEG of at most 100,000 bytes, quality lowered until it fits.
@Suite("Bounded JPEG snapshots", .serialized, .heavy)
struct BoundedJPEGTests {
    static func patternFrame(width: Int = 1280, height: Int = 720) throws -> Frame {
        var generator = try TestPatternGenerator(width: width, height: height)
        _ = generator.nextFrame(unixMs: 1_700_000_000_000, timestampNs: 0)
        return generator.nextFrame(unixMs: 1_700_000_000_033, timestampNs: 33_333_333)
    }

    /// Uniform noise in every plane (what compresses worst), with the stamp of the pattern on top.
    static func noisyFrame(width: Int = 1280, height: Int = 720) throws -> Frame {
        var frame = try patternFrame(width: width, height: height)
        var rng = SystemRandomNumberGenerator()
        let stampBytes = width * LatencyStamp.rows
        for i in stampBytes..<frame.bytes.count { frame.bytes[i] = UInt8.random(in: 16...235, using: &rng) }
        return frame
    }

    @Test("a 1280x720 test pattern fits at the preferred quality; its stamp reads back")
    func pattern() throws {
        let frame = try Self.patternFrame()
        let jpeg = try Snapshot.boundedJPEG(of: frame)
        #expect(jpeg.bytes.count <= 100_000)
        #expect(jpeg.quality == Snapshot.preferredJPEGQuality)
        #expect(jpeg.width == 1280 && jpeg.height == 720)
        #expect(jpeg.bytes.prefix(3) == [0xFF, 0xD8, 0xFF] && jpeg.bytes.suffix(2) == [0xFF, 0xD9])
        let picture = try Snapshot.decode(jpeg.bytes, format: .jpeg)
        #expect(picture.width == 1280 && picture.height == 720)
        #expect(try picture.readStamp().counter == 1)
        print("bounded JPEG, pattern 1280x720: \(jpeg.bytes.count) bytes at quality \(jpeg.quality)")
        // A tighter budget lowers the quality and still fits, at full size (quality 1 of this
        // picture is about 12.5 kB: the floor of 21,600 blocks).
        let budget = jpeg.bytes.count - 2_000
        let tight = try Snapshot.boundedJPEG(of: frame, maxBytes: budget)
        #expect(tight.bytes.count <= budget)
        #expect(tight.quality < Snapshot.preferredJPEGQuality)
        #expect(tight.width == 1280 && tight.height == 720)
        #expect(try Snapshot.decode(tight.bytes, format: .jpeg).readStamp().counter == 1)
        print("bounded JPEG, pattern 1280x720 in \(budget): \(tight.bytes.count) bytes at quality \(tight.quality)")
    }

    @Test("a noisy 1280x720 frame: lower quality, or a smaller picture, but never over the budget")
    func noise() throws {
        let frame = try Self.noisyFrame()
        let full = try Snapshot.encode(frame, as: .jpeg, jpegQuality: Snapshot.preferredJPEGQuality)
        #expect(full.count > 100_000, "the noise must not fit at the preferred quality for this test to mean anything")
        let jpeg = try Snapshot.boundedJPEG(of: frame)
        #expect(jpeg.bytes.count <= 100_000)
        #expect(jpeg.quality < Snapshot.preferredJPEGQuality)
        let picture = try Snapshot.decode(jpeg.bytes, format: .jpeg)
        #expect(picture.width == jpeg.width && picture.height == jpeg.height)
        print("bounded JPEG, noise 1280x720: \(jpeg.bytes.count) bytes at quality \(jpeg.quality), \(jpeg.width)x\(jpeg.height) (quality \(Snapshot.preferredJPEGQuality): \(full.count) bytes)")
        // A budget even quality 1 misses at full size: scaled down.
        let small = try Snapshot.boundedJPEG(of: frame, maxBytes: 20_000)
        #expect(small.bytes.count <= 20_000)
        #expect(small.width < 1280 && small.height < 720)
        #expect(try Snapshot.decode(small.bytes, format: .jpeg).width == small.width)
        print("bounded JPEG, noise in 20000: \(small.bytes.count) bytes at quality \(small.quality), \(small.width)x\(small.height)")
    }

    @Test("an H.264 delta frame, a zero budget and an empty frame are refused with a reason")
    func refusals() throws {
        let frame = try Self.patternFrame(width: 320, height: 240)
        #expect(throws: CameraError.invalidConfig("a JPEG budget of 10 bytes: needs at least 1000")) {
            try Snapshot.boundedJPEG(of: frame, maxBytes: 10)
        }
        let delta = Frame(format: .h264, width: 320, height: 240, bytes: [0, 0, 0, 1, 0x41, 0x9A], captureTimeMs: 0,
                          timestampNs: 0, sequence: 1, isKeyFrame: false)
        #expect(throws: CameraError.self) { try Snapshot.boundedJPEG(of: delta) }
        let empty = Frame(format: .i420, width: 0, height: 0, bytes: [], captureTimeMs: 0, timestampNs: 0, sequence: 0)
        #expect(throws: CameraError.self) { try Snapshot.boundedJPEG(of: empty) }
    }
}
