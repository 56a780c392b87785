import Dispatch
import Foundation
import Synchronization
import Testing
@testable import WebRTCLink

/// Issue 24 item 6: a subscriber that asks for it starts at once from the fan-out's recent key
/// frame (and the deltas after it), in order, then gets every unit as it comes; the recent units
/// are bounded (age, count, bytes); a stale or missing key frame means waiting as before.
@Suite("Fan-out recent key frame")
struct VideoFanOutRecentTests {
    /// What one subscriber got: (sequence number, key frame) in arrival order.
    final class Log: Sendable {
        private let units = Mutex<[(Int, Bool)]>([])
        func add(_ b: UnsafeRawBufferPointer, _ key: Bool) {
            let n = b.count >= 2 ? Int(b[0]) << 8 | Int(b[1]) : -1
            units.withLock { $0.append((n, key)) }
        }
        var all: [(Int, Bool)] { units.withLock { $0 } }
        var numbers: [Int] { all.map(\.0) }
    }

    final class Counter: Sendable {
        private let n = Mutex(0)
        func bump() { n.withLock { $0 += 1 } }
        var value: Int { n.withLock { $0 } }
    }

    /// Delivers unit `n` (its number in the first two bytes, `size` bytes in all).
    static func deliver(_ fan: VideoFanOut, _ n: Int, key: Bool, size: Int = 16) {
        var bytes = [UInt8](repeating: 0, count: max(2, size))
        bytes[0] = UInt8(truncatingIfNeeded: n >> 8)
        bytes[1] = UInt8(truncatingIfNeeded: n)
        bytes.withUnsafeBytes { fan.deliver($0, isKeyFrame: key) }
    }

    /// Polls until `done` (each poll yields), or 10 s.
    static func wait(_ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    }

    static let roomy = RecentUnits.Limit(maxAge: .seconds(30), maxUnits: 16, maxBytes: 1 << 20)

    @Test("a joining subscriber gets the recent key frame and its deltas at once, in order, then the live units; no key frame is asked")
    func startsFromRecent() async throws {
        let forced = Counter()
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: Self.roomy) { forced.bump() }
        Self.deliver(fan, 1, key: false)  // before any key frame: not kept
        Self.deliver(fan, 2, key: true)
        Self.deliver(fan, 3, key: false)
        Self.deliver(fan, 4, key: false)
        let log = Log()
        _ = fan.subscribe(startFromRecentKeyFrame: true) { log.add($0, $1) }
        try await Self.wait { log.all.count == 3 }
        #expect(log.numbers == [2, 3, 4])
        #expect(log.all.first?.1 == true)
        #expect(forced.value == 0)
        Self.deliver(fan, 5, key: false)
        Self.deliver(fan, 6, key: false)
        #expect(log.numbers == [2, 3, 4, 5, 6])  // live now: delivered on this thread
        #expect(fan.stats.startsFromRecent == 1)
        #expect(fan.stats.recentUnitsReplayed == 3)
    }

    @Test("without asking, or with a stale key frame, a subscriber waits for the next key frame, which is asked")
    func staleOrNotAskedWaits() async throws {
        let forced = Counter()
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: Self.roomy) { forced.bump() }
        Self.deliver(fan, 1, key: true)
        Self.deliver(fan, 2, key: false)
        let plain = Log()
        _ = fan.subscribe { plain.add($0, $1) }
        #expect(forced.value == 1)
        // A limit whose key frames are always too old.
        let staleFan = VideoFanOut(minimumKeyFrameSpacing: .zero,
                                   recentLimit: .init(maxAge: .nanoseconds(1), maxUnits: 16, maxBytes: 1 << 20)) { forced.bump() }
        Self.deliver(staleFan, 1, key: true)
        let stale = Log()
        _ = staleFan.subscribe(startFromRecentKeyFrame: true) { stale.add($0, $1) }
        #expect(forced.value == 2)
        #expect(staleFan.stats.startsFromRecent == 0)
        Self.deliver(fan, 3, key: false)
        Self.deliver(fan, 4, key: true)
        Self.deliver(staleFan, 2, key: false)
        Self.deliver(staleFan, 3, key: true)
        #expect(plain.numbers == [4])
        #expect(stale.numbers == [3])
    }

    @Test("the recent units are bounded: too many units or bytes drop the chain until the next key frame")
    func bounded() {
        var recent = RecentUnits(limit: .init(maxAge: .seconds(30), maxUnits: 3, maxBytes: 100))
        func unit(_ key: Bool, _ size: Int, at: UInt64 = 1) -> RecentUnits.Unit {
            RecentUnits.Unit(bytes: [UInt8](repeating: 0, count: size), isKeyFrame: key, atNanos: at)
        }
        recent.add(unit(false, 10))
        #expect(recent.units.isEmpty)  // nothing before a key frame
        recent.add(unit(true, 10))
        recent.add(unit(false, 10))
        recent.add(unit(false, 10))
        #expect(recent.units.count == 3)
        #expect(recent.servable(at: 2).count == 3)
        recent.add(unit(false, 10))  // a fourth unit: over maxUnits
        #expect(recent.units.isEmpty)
        recent.add(unit(false, 10))  // and nothing until a key frame
        #expect(recent.servable(at: 2).isEmpty)
        recent.add(unit(true, 60))
        recent.add(unit(false, 50))  // 110 bytes: over maxBytes
        #expect(recent.units.isEmpty)
        recent.add(unit(true, 60))
        #expect(recent.bytes == 60)
        // Age: a delta past maxAge after its key frame drops the chain; an old key frame is not served.
        var aged = RecentUnits(limit: .init(maxAge: .milliseconds(100), maxUnits: 10, maxBytes: 1000))
        aged.add(unit(true, 10, at: 1_000_000_000))
        #expect(aged.servable(at: 1_050_000_000).count == 1)
        #expect(aged.servable(at: 1_200_000_000).isEmpty)
        aged.add(unit(false, 10, at: 1_150_000_000))
        #expect(aged.units.isEmpty)
        // `.none` keeps nothing.
        let fan = VideoFanOut(recentLimit: .none, forceKeyFrame: nil)
        Self.deliver(fan, 1, key: true)
        let log = Log()
        _ = fan.subscribe(startFromRecentKeyFrame: true) { log.add($0, $1) }
        #expect(fan.stats.startsFromRecent == 0)
    }

    @Test("joins while another thread delivers: every subscriber's units are consecutive from a key frame, none twice, none out of order")
    func joinsDuringDelivery() async throws {
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: .init(maxAge: .seconds(30), maxUnits: 64, maxBytes: 1 << 20),
                              forceKeyFrame: nil)
        let total = 1500
        let source = Counter()
        let joins = Counter()
        // The source: a key frame every 10 units. It does not run ahead of the joins (one per 75
        // units, up to 15): on a loaded machine the joining task may get no thread for a while, and
        // a source that finished meanwhile would leave nothing to join during.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for n in 1...total {
                while joins.value < min(n / 75, 15) { usleep(100) }
                Self.deliver(fan, n, key: n % 10 == 1)
                source.bump()
                usleep(200)  // about 0.3 s in all: joins land between and during deliveries
            }
            done.signal()
        }
        var logs: [Log] = []
        while source.value < total - 200 {
            let log = Log()
            _ = fan.subscribe(startFromRecentKeyFrame: true) { bytes, key in
                log.add(bytes, key)
                // A slow first unit: the source delivers meanwhile (the hand-over is exercised).
                if log.all.count == 1 { usleep(1000) }
            }
            logs.append(log)
            joins.bump()
            try await Task.sleep(for: .milliseconds(1))
        }
        try await Self.wait { source.value == total }
        // Every catching-up subscriber has handed over (no one is left mid-way).
        try await Self.wait { logs.allSatisfy { $0.numbers.last == total || $0.numbers.isEmpty } }
        #expect(fan.stats.startsFromRecent > 0)
        var gaps = 0
        for log in logs {
            let got = log.all
            guard let first = got.first else { continue }
            #expect(first.1, "starts at a key frame")
            #expect(first.0 % 10 == 1)
            let numbers = got.map(\.0)
            // Consecutive, once each, in order. The one gap allowed: a subscriber whose catch-up
            // thread was starved past the limit (a loaded machine) is abandoned and waits for the
            // next key frame (`fallsBehind` tests that on purpose): forward, to a key frame.
            let breaks = zip(numbers, numbers.dropFirst()).filter { $1 != $0 + 1 }
            #expect(breaks.allSatisfy { $1 > $0 + 1 && $1 % 10 == 1 },
                    "consecutive, once each: \(breaks.map { "\($0.0) then \($0.1)" })")
            gaps += breaks.count
            #expect(numbers.last == total)
        }
        #expect(gaps <= fan.stats.catchUpsAbandoned, "\(gaps) gaps, \(fan.stats.catchUpsAbandoned) catch-ups abandoned")
        done.wait()
    }

    @Test("a subscriber that falls behind while catching up waits for the next key frame (bounded), which is asked")
    func fallsBehind() async throws {
        let forced = Counter()
        let limit = RecentUnits.Limit(maxAge: .seconds(30), maxUnits: 4, maxBytes: 1 << 20)
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: limit) { forced.bump() }
        Self.deliver(fan, 1, key: true)
        Self.deliver(fan, 2, key: false)
        let gate = DispatchSemaphore(value: 0)
        let entered = Counter()
        let log = Log()
        _ = fan.subscribe(startFromRecentKeyFrame: true) { bytes, key in
            log.add(bytes, key)
            if entered.value == 0 {
                entered.bump()
                gate.wait()  // the catching-up thread (not the pool) is held on the first unit
            }
        }
        try await Self.wait { entered.value == 1 }
        for n in 3...7 { Self.deliver(fan, n, key: false) }  // 5 units come: more than maxUnits wait
        #expect(fan.stats.catchUpsAbandoned == 1)
        gate.signal()
        try await Self.wait { forced.value == 1 }
        #expect(log.numbers == [1, 2])
        Self.deliver(fan, 8, key: false)
        Self.deliver(fan, 9, key: true)
        Self.deliver(fan, 10, key: false)
        #expect(log.numbers == [1, 2, 9, 10])
    }
}
