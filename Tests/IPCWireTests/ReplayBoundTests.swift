import Testing
import TestSupport
@testable import IPCWire

/// Issue 10, hostile peers: the replay state is bounded, and a replay after a restart is refused by
/// the envelope time of a sender's first message.
@Suite("Replay state: bounded, and fresh after a restart")
struct ReplayBoundTests {
    private let key = "0123456789abcdef"
    private let now: Int64 = 1_732_200_000

    private func sealed(_ mode: SecurityMode, from: UInt32, seq: UInt32, t: Int64) throws -> [UInt8] {
        var sealer = try PayloadSealer(mode: mode, localKey: key, from: from, startSeq: seq)
        let query = AbilityQuery(curId: "u", reqId: "r")
        return try sealer.seal(query.envelope(t: t))
    }

    @Test("a flood of distinct from values never grows the table past its capacity; the least recent goes")
    func bounded() {
        var guardState = ReplayGuard(capacity: 64)
        for from in UInt32(2)..<10_002 { guardState.accept(SealHeader(seq: 1, from: from)) }
        #expect(guardState.count == 64)
        #expect(guardState.knows(10_001) && !guardState.knows(2))
        // Touching a sender keeps it: the next newcomer evicts someone else.
        guardState.accept(SealHeader(seq: 2, from: 9_950))
        guardState.accept(SealHeader(seq: 1, from: 20_000))
        #expect(guardState.knows(9_950) && !guardState.knows(9_938))
    }

    @Test("opener: 5000 senders in pv2.2 (whose header anyone can forge) keep the table bounded",
          .heavy, arguments: [SecurityMode.pv22, .pv23])
    func openerBounded(_ mode: SecurityMode) async throws {
        // 5,000 seals and opens: seconds of CPU under load, on a thread of its own.
        let count = try await offThePool { [self] () throws -> Int in
            var opener = try PayloadOpener(mode: mode, localKey: key, replaySenders: 128)
            for from in UInt32(2)..<5_002 {
                _ = try opener.openMessage(sealed(mode, from: from, seq: 1, t: now), nowSeconds: now)
            }
            return opener.replayGuard.count
        }
        #expect(count == 128)
    }

    @Test("after a restart, a recorded message older than the window is refused; a fresh one is accepted",
          arguments: [SecurityMode.pv22, .pv23])
    func replayAfterRestart(_ mode: SecurityMode) throws {
        let recorded = try sealed(mode, from: 0x8000_0002, seq: 100, t: now - 600)
        var before = try PayloadOpener(mode: mode, localKey: key)
        _ = try before.openMessage(recorded, nowSeconds: now - 600)  // accepted when it was sent
        // The device restarts: its replay state is empty.
        var restarted = try PayloadOpener(mode: mode, localKey: key)
        #expect(throws: WireError.staleEnvelope(from: 0x8000_0002, t: now - 600, now: now, windowSeconds: 300)) {
            _ = try restarted.openMessage(recorded, nowSeconds: now)
        }
        #expect(restarted.replayGuard.count == 0, "a refused message left a trace")
        // The same sender, fresh: accepted; from then on its seq rules (not its clock).
        _ = try restarted.openMessage(try sealed(mode, from: 0x8000_0002, seq: 101, t: now + 200), nowSeconds: now)
        _ = try restarted.openMessage(try sealed(mode, from: 0x8000_0002, seq: 102, t: now - 10_000), nowSeconds: now)
        #expect(throws: WireError.self) { _ = try restarted.openMessage(recorded, nowSeconds: now) }
    }

    @Test("envelope times at the extremes are refused on first contact, never trapped on", arguments: [Int64.max, Int64.min])
    func extremeTimes(_ t: Int64) throws {
        var opener = try PayloadOpener(mode: .pv23, localKey: key)
        #expect(throws: WireError.self) { _ = try opener.openMessage(try sealed(.pv23, from: 5, seq: 1, t: t), nowSeconds: now) }
        #expect(throws: WireError.self) { _ = try opener.openMessage(try sealed(.pv23, from: 5, seq: 1, t: 0), nowSeconds: .min) }
    }

    @Test("without the receiver's clock (nowSeconds nil) only the seq rule applies, as before")
    func noClock() throws {
        var opener = try PayloadOpener(mode: .pv23, localKey: key)
        _ = try opener.openMessage(try sealed(.pv23, from: 5, seq: 1, t: 0))
    }
}
