import Camera
import TestSupport

/// Test clips for the H.265 pass-through (PROTOCOL.md 7): stamped test-pattern frames (counter n
/// for frame n) through a real x265enc, as an Annex-B byte stream.
public enum H265ClipEncoder {
    public static func encode(count: Int, width: Int, height: Int, fps: Int = 15, keyInterval: Int = 15) async throws -> [UInt8] {
        try await encodeAccessUnits(count: count, width: width, height: height, fps: fps, keyInterval: keyInterval)
            .reduce(into: []) { $0 += $1 }
    }

    /// The same, one access unit per element (`alignment=au`), as an H.265 camera hands them over,
    /// one V4L2 buffer each. The encoding runs on a thread of its own (`offThePool`): its pulls block.
    public static func encodeAccessUnits(count: Int, width: Int, height: Int, fps: Int = 15, keyInterval: Int = 15) async throws
        -> [[UInt8]]
    {
        try await offThePool { try encodeBlocking(count: count, width: width, height: height, fps: fps, keyInterval: keyInterval) }
    }

    private static func encodeBlocking(count: Int, width: Int, height: Int, fps: Int, keyInterval: Int) throws -> [[UInt8]] {
        let frameNs = UInt64(1_000_000_000 / fps)
        let caps = FrameCaps.caps(format: .i420, width: width, height: height, fps: Double(fps))
        let pipeline = try GStreamerPipeline(
            "appsrc name=src format=time caps=\"\(caps)\" ! x265enc tune=zerolatency speed-preset=ultrafast "
                + "key-int-max=\(keyInterval) bitrate=400 ! h265parse ! video/x-h265,stream-format=byte-stream,alignment=au ! "
                + "appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        var generator = try TestPatternGenerator(width: width, height: height)
        for i in 0..<count {
            let frame = generator.nextFrame(unixMs: 1_000_000 + Int64(i), timestampNs: UInt64(i) * frameNs)
            try pipeline.push(frame.bytes, ptsNs: UInt64(i) * frameNs, durationNs: frameNs)
        }
        try pipeline.endOfStream()
        var out: [[UInt8]] = []
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) { out.append(sample.bytes) }
        return out
    }
}
