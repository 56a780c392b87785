import Dispatch
import Foundation
import Synchronization
import Testing
@testable import WebRTCLink

/// Issue 24 item 5: a fan-out that hands units to delivery lanes, where each link sends them
/// through its whole send path; the source's thread only queues. Every subscriber keeps its order;
/// a lane that falls behind makes its subscribers skip to the next key frame, not queue forever.
@Suite("Shared encoder fan-out: delivery lanes")
struct VideoFanOutLanesTests {
    final class Log: Sendable {
        let units = Mutex<[UInt16]>([])
        func add(_ b: UnsafeRawBufferPointer) {
            let value = b.count >= 2 ? UInt16(b[0]) << 8 | UInt16(b[1]) : 0
            units.withLock { $0.append(value) }
        }
        var all: [UInt16] { units.withLock { $0 } }
    }

    func deliver(_ fan: VideoFanOut, _ n: UInt16, key: Bool) {
        [UInt8(n >> 8), UInt8(n & 0xff)].withUnsafeBytes { fan.deliver($0, isKeyFrame: key) }
    }

    /// Delivers units start..<start+count (a key frame every 100) on this thread, marked in
    /// `marking` meanwhile.
    func deliverAll(_ fan: VideoFanOut, from start: Int, count: Int, marking: borrowing Mutex<UInt?>) {
        marking.withLock { $0 = UInt(pthread_self()) }
        defer { marking.withLock { $0 = nil } }
        for n in start..<start + count { deliver(fan, UInt16(n), key: n % 100 == 0) }
    }

    /// Waits (up to 10 s) until `done` holds; the lanes run on their own threads.
    func waitUntil(_ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("10 subscribers on 3 lanes each get every unit from the key frame on, in order, off the source's thread")
    func everyUnitInOrder() async throws {
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: .none, delivery: .lanes(3)) {}
        // The thread inside `deliver` right now (threads are pooled: the same one may serve a
        // lane later, so only a handler called while its own thread delivers is inline).
        let delivering = Mutex<UInt?>(nil)
        let inline = Mutex(0)
        let logs = (0..<10).map { _ in Log() }
        for log in logs {
            _ = fan.subscribe { bytes, _ in
                if delivering.withLock({ $0 == UInt(pthread_self()) }) { inline.withLock { $0 += 1 } }
                log.add(bytes)
            }
        }
        // In steps of 10 (an encoder makes 30 a second; a burst of 300 would overflow the lanes).
        for step in 0..<30 {
            deliverAll(fan, from: step * 10, count: 10, marking: delivering)
            try await waitUntil { logs.allSatisfy { $0.all.count == (step + 1) * 10 } }
        }
        for log in logs { #expect(log.all == (0..<300).map { UInt16($0) }) }
        #expect(inline.withLock { $0 } == 0)
        #expect(fan.stats.deliveries == 3000)
        #expect(fan.stats.laneOverflows == 0)
    }

    @Test("a lane too far behind: its subscriber skips to the next key frame, asked once the lane has sent what it held; an IDR meanwhile is skipped and asks nothing")
    func laneBacklogSkipsToKeyFrame() async throws {
        let forced = Atomic<Int>(0)
        let fan = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: .none, delivery: .lanes(1)) {
            forced.add(1, ordering: .relaxed)
        }
        let gate = DispatchSemaphore(value: 0)
        let log = Log()
        _ = fan.subscribe { bytes, _ in
            if log.all.isEmpty { gate.wait() }  // the lane is stuck on the first unit
            log.add(bytes)
        }
        let askedAtJoin = forced.load(ordering: .relaxed)
        let limit = UInt16(VideoFanOut.laneBacklogLimit)
        deliver(fan, 0, key: true)
        for n in 1..<limit { deliver(fan, n, key: false) }
        // `limit` units wait on the lane now: the next one overflows it; the ones after are
        // skipped, the key frame limit + 2 too (the lane is still behind: taking it would
        // overflow it again).
        for n in limit..<limit + 5 { deliver(fan, n, key: n == limit + 2) }
        #expect(fan.stats.laneOverflows == 1)
        #expect(fan.stats.deltasSkipped == 3)
        #expect(forced.load(ordering: .relaxed) == askedAtJoin, "no key frame asked while the lane still holds its backlog")
        gate.signal()
        try await waitUntil { log.all.count == Int(limit) }
        // Once the lane has sent its backlog, the next unit asks for the key frame.
        var n: UInt16 = limit + 5
        try await waitUntil {
            deliver(fan, n, key: false)
            n += 1
            return forced.load(ordering: .relaxed) > askedAtJoin
        }
        #expect(forced.load(ordering: .relaxed) == askedAtJoin + 1)
        deliver(fan, 1000, key: true)
        deliver(fan, 1001, key: false)
        try await waitUntil { log.all.count == Int(limit) + 2 }
        #expect(log.all == (0..<limit).map { $0 } + [1000, 1001])
        #expect(fan.stats.laneOverflows == 1)
    }
}
