import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 5: the test tone is made once per process and handed to every link that sends it.
@Suite("Shared audio tone", .heavy)
struct SharedAudioToneTests {
    final class Buffers: Sendable {
        let sizes = Mutex<[Int]>([])
        let firstBytes = Mutex<[[UInt8]]>([])
        func add(_ b: UnsafeRawBufferPointer) {
            sizes.withLock { $0.append(b.count) }
            firstBytes.withLock { $0.append(Array(b.prefix(16))) }
        }
        var count: Int { sizes.withLock { $0.count } }
    }

    func waitUntil(_ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    @Test("two subscribers get the same 128 ms PCMA buffers from one pipeline; it stops after the last leaves and starts again")
    func oneToneForAll() async throws {
        let tone = SharedAudioTone(linger: .milliseconds(200))
        let a = Buffers(), b = Buffers()
        let first = try tone.subscribe { bytes, _ in a.add(bytes) }.get()
        let second = try tone.subscribe { bytes, _ in b.add(bytes) }.get()
        #expect(tone.isPlaying)
        try await waitUntil { a.count >= 4 && b.count >= 4 }
        #expect(a.count >= 4 && b.count >= 4)
        // 1,024 samples of A-law at 8 kHz per buffer (7.8 a second per link, as the tone was).
        #expect(a.sizes.withLock { $0.allSatisfy { $0 == 1024 } })
        // The same buffers: the later subscriber's are a run of the earlier one's.
        let aBytes = a.firstBytes.withLock { $0 }, bBytes = b.firstBytes.withLock { $0 }
        let start = try #require(aBytes.firstIndex(of: bBytes[0]))
        #expect(Array(aBytes[start..<min(aBytes.count, start + 3)]) == Array(bBytes.prefix(min(3, aBytes.count - start))))
        tone.unsubscribe(first)
        tone.unsubscribe(second)
        try await waitUntil { !tone.isPlaying }
        #expect(!tone.isPlaying)
        let c = Buffers()
        let third = try tone.subscribe { bytes, _ in c.add(bytes) }.get()
        try await waitUntil { c.count >= 2 }
        #expect(c.count >= 2)
        tone.unsubscribe(third)
    }
}
