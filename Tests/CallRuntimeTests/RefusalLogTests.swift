import IPCWire
import Testing
@testable import CallRuntime

/// Issue 10, hostile peers: refusals are all counted, their log lines rate-limited with counts.
@Suite("Refusal log: counted, rate-limited")
struct RefusalLogTests {
    @Test("a flood in one window writes the first lines only, then says how many it held back")
    func rateLimited() {
        let log = RefusalLog(linesPerWindow: 20, windowMs: 1000)
        var written = 0
        for i in 0..<5_000 {
            let (write, suppressed) = log.record(.malformed, nowMs: 10_000 + Int64(i % 1000) / 10)
            if write { written += 1; #expect(suppressed == 0) }
        }
        #expect(written == 20)
        #expect(log.pendingSuppressed == 4_980)
        // The next window: the first line carries the count.
        let next = log.record(.replayed, nowMs: 11_000)
        #expect(next.log && next.suppressed == 4_980)
        #expect(log.totals[.malformed] == 5_000 && log.totals[.replayed] == 1 && log.totals[.call] == 0)
    }

    @Test("a clock at the extremes or going backwards never traps")
    func clockExtremes() {
        let log = RefusalLog()
        for now in [Int64.min, .max, 0, -5, .max, .min] { _ = log.record(.call, nowMs: now) }
        #expect(log.totals[.call] == 6)
    }

    @Test("wire errors map to their kinds")
    func kinds() {
        #expect(RefusalLog.Kind(WireError.payloadTooLarge(size: 1, limit: 0)) == .tooLarge)
        #expect(RefusalLog.Kind(WireError.replayed(from: 1, seq: 1, lastAccepted: 2)) == .replayed)
        #expect(RefusalLog.Kind(WireError.authenticationFailed) == .unauthenticated)
        #expect(RefusalLog.Kind(WireError.malformedJSON("x")) == .malformed)
    }
}
