import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 11: one encoded stream, many links. A joining link starts at a key frame; joins share
/// rate-limited forced key frames; a real shared x264 encoder honours the requests.
@Suite("Shared encoder fan-out", .heavy)
struct VideoFanOutTests {
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var units: [(UInt8, Bool)] = []
        func add(_ b: UnsafeRawBufferPointer, _ key: Bool) { lock.withLock { units.append((b.first ?? 0, key)) } }
        var all: [(UInt8, Bool)] { lock.withLock { units } }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func bump() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    func deliver(_ fan: VideoFanOut, _ id: UInt8, key: Bool) {
        [id].withUnsafeBytes { fan.deliver($0, isKeyFrame: key) }
    }

    @Test("a subscriber gets nothing before a key frame, then every unit; two subscribers get the same units")
    func joinsAtKeyFrame() {
        let forced = Counter()
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero) { forced.bump() }
        let early = Received()
        _ = fan.subscribe { early.add($0, $1) }
        deliver(fan, 1, key: true)
        deliver(fan, 2, key: false)
        let late = Received()
        _ = fan.subscribe { late.add($0, $1) }
        deliver(fan, 3, key: false)  // the late one skips this delta
        deliver(fan, 4, key: true)
        deliver(fan, 5, key: false)
        #expect(early.all.map(\.0) == [1, 2, 3, 4, 5])
        #expect(late.all.map(\.0) == [4, 5])
        #expect(late.all.first?.1 == true)
        #expect(forced.value == 2)  // one per join
        #expect(fan.stats.deltasSkipped == 1)
    }

    @Test("50 joins in a burst force a few key frames, not 50; the deferred one still comes")
    func keyFramesAreRateLimited() async throws {
        let forced = Counter()
        let fan = VideoFanOut(minimumKeyFrameSpacing: .milliseconds(200)) { forced.bump() }
        var ids: [Int] = []
        for _ in 0..<50 { ids.append(fan.subscribe { _, _ in }) }
        #expect(forced.value == 1)
        #expect(fan.stats.keyFrameRequests == 50)
        // The requests after the first share one forced key frame once the spacing has passed.
        let deadline = ContinuousClock.now + .seconds(3)
        while forced.value < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(forced.value == 2)
        for id in ids { fan.unsubscribe(id) }
        #expect(fan.subscriberCount == 0)
    }

    @Test("a shared x264 encoder: two subscribers get identical access units, a late one starts at a forced IDR",
          .timeLimit(.minutes(8)))
    func sharedEncoderFansOut() async throws {
        let encoder = try SharedH264Encoder(video: VideoFormat(width: 320, height: 240, fps: 30), input: .i420,
                                            keyFrameIntervalSeconds: 10, minimumKeyFrameSpacing: .milliseconds(50))
        try encoder.start()
        defer { encoder.stop() }
        final class Units: @unchecked Sendable {
            private let lock = NSLock()
            private var list: [([UInt8], Bool)] = []
            func add(_ b: UnsafeRawBufferPointer, _ key: Bool) { lock.withLock { list.append((Array(b), key)) } }
            var all: [([UInt8], Bool)] { lock.withLock { list } }
        }
        let a = Units(), b = Units(), late = Units()
        _ = encoder.fanOut.subscribe { a.add($0, $1) }
        _ = encoder.fanOut.subscribe { b.add($0, $1) }
        let frame = [UInt8](repeating: 128, count: WebRTCAnswerer.i420Size(width: 320, height: 240))
        var pushed = 0
        func push(_ n: Int) async throws {
            for _ in 0..<n {
                var f = frame
                f[pushed % 1000] = UInt8(pushed % 200)  // frames differ a little
                #expect(encoder.push(f))
                pushed += 1
                try await Task.sleep(for: .milliseconds(33))
            }
        }
        try await push(20)
        _ = encoder.fanOut.subscribe { late.add($0, $1) }
        try await push(20)
        let deadline = ContinuousClock.now + .seconds(5)
        while late.all.isEmpty || encoder.stats.accessUnitsOut < 35, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(a.all.count >= 30)
        #expect(a.all.first?.1 == true)
        let common = min(a.all.count, b.all.count)
        #expect(a.all.prefix(common).map(\.0) == b.all.prefix(common).map(\.0))
        // The late subscriber's first unit is a key frame forced mid-stream (interval is 10 s),
        // with SPS and PPS in front.
        let first = try #require(late.all.first)
        #expect(first.1)
        let types = Self.nalTypes(first.0)
        #expect(types.contains(7) && types.contains(8) && types.contains(5), "NAL types \(types)")
        #expect(encoder.stats.keyFramesOut >= 2)
        #expect(encoder.error == nil)
    }

    /// The NAL unit types of an Annex B access unit.
    static func nalTypes(_ au: [UInt8]) -> [UInt8] {
        var types: [UInt8] = []
        var i = 0
        while i + 3 < au.count {
            if au[i] == 0, au[i + 1] == 0, au[i + 2] == 1 {
                types.append(au[i + 3] & 0x1F)
                i += 3
            } else {
                i += 1
            }
        }
        return types
    }
}
