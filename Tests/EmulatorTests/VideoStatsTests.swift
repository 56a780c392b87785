@testable import AppSimulator
import Camera
import Testing

/// What the app reports of a call's video (`VideoStats`) from stamped frames (PROTOCOL.md 6):
/// live stamps give latency and drops; a recorded clip's stamps, and a counter that starts again
/// when a clip loops, are named as such instead of as years of latency and thousands of drops.
struct VideoStatsTests {
    static let width = 320, height = 180

    /// A luma plane with `stamp` drawn on it.
    static func frame(_ stamp: LatencyStamp) -> [UInt8] {
        var luma = [UInt8](repeating: LatencyStamp.black, count: width * height)
        luma.withUnsafeMutableBufferPointer { p in
            if let base = p.baseAddress { stamp.draw(luma: base, width: width, height: height, stride: width) }
        }
        return luma
    }

    static func add(_ stats: inout VideoStats, counter: UInt64, capturedMs: Int64, arrivalMs: Int64) {
        stats.add(luma: frame(LatencyStamp(unixMs: capturedMs, sequence: counter)), width: width, height: height,
                  stride: width, arrivalUnixNanos: arrivalMs * 1_000_000, answeredAt: nil)
    }

    @Test("live stamps: latency from the stamp, a gap of two frames counted as two drops")
    func liveStamps() {
        var stats = VideoStats()
        let now: Int64 = 1_795_700_000_000
        for (i, counter) in [10, 11, 12, 15, 16].enumerated() {
            Self.add(&stats, counter: UInt64(counter), capturedMs: now + Int64(i) * 33, arrivalMs: now + Int64(i) * 33 + 40)
        }
        #expect(stats.stampsRead == 5 && stats.framesDropped == 2 && stats.counterRestarts == 0)
        #expect(stats.recordedStamps == 0 && stats.latenciesMs == [40, 40, 40, 40, 40])
        #expect(stats.summary.contains("2 dropped") && stats.summary.contains("latency p50 40.0 ms"))
        // Where the gap was: after the third frame, the fourth decoded.
        #expect(stats.gaps.map(\.frame) == [4])
        #expect(stats.gaps.first?.counterBefore == 12 && stats.gaps.first?.counterAfter == 15 && stats.gaps.first?.missing == 2)
    }

    @Test("a clip stamped long ago that loops: no latency, no drops, the restart counted")
    func recordedClipThatLoops() {
        var stats = VideoStats()
        let now: Int64 = 1_795_700_000_000
        let counters = Array(0..<60) + Array(0..<15)
        for (i, counter) in counters.enumerated() {
            Self.add(&stats, counter: UInt64(counter), capturedMs: 1_000_000 + Int64(counter), arrivalMs: now + Int64(i) * 66)
        }
        #expect(stats.stampsRead == 75 && stats.framesDropped == 0 && stats.counterRestarts == 1)
        #expect(stats.recordedStamps == 75 && stats.latenciesMs.isEmpty && stats.latencyPercentile(50) == nil)
        #expect(stats.summary.contains("0 dropped") && stats.summary.contains("counter started again 1x")
                && stats.summary.contains("75 stamps from a recording"), "\(stats.summary)")
    }
}
