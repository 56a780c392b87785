import IPCWire
import Testing
@testable import CallEngine

/// PROTOCOL.md 3.4: replies to refused messages, at most 5 a second per sender and 50 a second per
/// device (issue 23). The clock is the test's: every time is passed in.
@Suite("Refusal replies: limited per sender and per device (3.4)")
struct RefusalReplyLimiterTests {
    @Test("5 a second per sender: the 6th reply within the second is dropped as the sender's")
    func perSender() {
        var limiter = RefusalReplyLimiter()
        let verdicts = (0..<10).map { i in limiter.admit(replyTo: "mallory", now: t0 + Int64(i) * 10) }
        #expect(verdicts == Array(repeating: .send, count: 5) + Array(repeating: .drop(.sender), count: 5))
        // Another sender still gets its own five.
        #expect((0..<5).map { _ in limiter.admit(replyTo: "eve", now: t0 + 100) } == Array(repeating: .send, count: 5))
        #expect(limiter.admit(replyTo: "eve", now: t0 + 100) == .drop(.sender))
    }

    @Test("a new second refills: the window slides, one reply back for each one a second old")
    func refills() {
        var limiter = RefusalReplyLimiter()
        for i in 0..<5 { #expect(limiter.admit(replyTo: "mallory", now: t0 + Int64(i) * 100) == .send) }
        #expect(limiter.admit(replyTo: "mallory", now: t0 + 999) == .drop(.sender))
        // At t0 + 1000 the first reply is a whole second old: one more; the next waits for t0 + 1100.
        #expect(limiter.admit(replyTo: "mallory", now: t0 + 1000) == .send)
        #expect(limiter.admit(replyTo: "mallory", now: t0 + 1000) == .drop(.sender))
        #expect(limiter.admit(replyTo: "mallory", now: t0 + 1099) == .drop(.sender))
        #expect(limiter.admit(replyTo: "mallory", now: t0 + 1100) == .send)
        // A quiet second later: five again.
        let later = (0..<6).map { _ in limiter.admit(replyTo: "mallory", now: t0 + 5_000) }
        #expect(later == Array(repeating: .send, count: 5) + [.drop(.sender)])
    }

    @Test("50 a second per device: many senders together get no more than 50")
    func perDevice() {
        var limiter = RefusalReplyLimiter()
        let verdicts = (0..<100).map { i in limiter.admit(replyTo: "m-\(i)", now: t0) }
        #expect(verdicts.filter { $0 == .send }.count == 50)
        #expect(Array(verdicts.dropFirst(50)) == Array(repeating: .drop(.device), count: 50))
        // The sender check comes first: a sender over its own five is dropped as the sender's.
        var busy = RefusalReplyLimiter()
        for _ in 0..<5 { _ = busy.admit(replyTo: "a", now: t0) }
        for i in 0..<45 { #expect(busy.admit(replyTo: "b-\(i)", now: t0) == .send) }
        #expect(busy.admit(replyTo: "a", now: t0) == .drop(.sender))
        #expect(busy.admit(replyTo: "c", now: t0) == .drop(.device))
        #expect(busy.admit(replyTo: "c", now: t0 + 1000) == .send)
    }

    @Test("a dropped reply uses up no budget: one loud sender leaves the rest of the device's 50 to others")
    func dropsCostNothing() {
        var limiter = RefusalReplyLimiter()
        for _ in 0..<1_000 { _ = limiter.admit(replyTo: "loud", now: t0) }
        let others = (0..<50).map { i in limiter.admit(replyTo: "quiet-\(i)", now: t0 + 1) }
        #expect(others.filter { $0 == .send }.count == 45)
    }

    @Test("a flood of 2,000 distinct senders a second for 20 s: at most 50 replies in any second, and the sender table stays at most 50 entries")
    func floodOfDistinctSenders() {
        var limiter = RefusalReplyLimiter()
        var sentAt: [Int64] = []
        var largestTable = 0
        var rng = SplitMix64(state: 23)
        for i in 0..<40_000 {
            let now = t0 + Int64(i) / 2   // 2 a ms
            let sender = rng.next() % 4 == 0 ? "repeat-\(rng.next() % 8)" : "m-\(i)"
            if limiter.admit(replyTo: sender, now: now) == .send { sentAt.append(now) }
            largestTable = max(largestTable, limiter.trackedSenders)
        }
        #expect(largestTable <= 50)
        // Any window of one second holds at most 50 (sentAt is in time order, up to jitter).
        let sorted = sentAt.sorted()
        var worst = 0
        var start = 0
        for end in sorted.indices {
            while sorted[end] - sorted[start] >= 1000 { start += 1 }
            worst = max(worst, end - start + 1)
        }
        #expect(worst <= 50)
        // And the budget is used: ~50 a second over the 20 s.
        #expect(sorted.count >= 50 * 19, "\(sorted.count) replies in 20 s")
    }

    @Test("a clock that jumps back more than a window starts over, a small step back is no time passing; extremes never trap")
    func clockJumps() {
        var limiter = RefusalReplyLimiter()
        for i in 0..<50 { _ = limiter.admit(replyTo: "m-\(i)", now: t0 + 500) }
        #expect(limiter.admit(replyTo: "x", now: t0 + 500) == .drop(.device))
        // 400 ms back, then 900 ms on from there: still within the second of t0 + 500.
        #expect(limiter.admit(replyTo: "x", now: t0 + 100) == .drop(.device))
        #expect(limiter.admit(replyTo: "x", now: t0 + 1_000) == .drop(.device))
        #expect(limiter.admit(replyTo: "x", now: t0 + 1_500) == .send)
        // An hour back: start over.
        for i in 0..<50 { _ = limiter.admit(replyTo: "n-\(i)", now: t0 + 1_600) }
        #expect(limiter.admit(replyTo: "y", now: t0 + 1_600) == .drop(.device))
        #expect(limiter.admit(replyTo: "y", now: t0 - 3_600_000) == .send)
        var extremes = RefusalReplyLimiter()
        for now in [Int64.min, .max, 0, -5, .max, .min, .max] {
            for _ in 0..<7 { _ = extremes.admit(replyTo: "a", now: now) }
        }
        #expect(extremes.trackedSenders <= 50)
        let tiny = RefusalReplyLimiter(limits: .init(perSender: 0, perDevice: -3, windowMs: 0))
        #expect(tiny.limits == .init(perSender: 1, perDevice: 1, windowMs: 1))
    }

    @Test("in a refused message's effects every reply is limited (the §3 engine's stop invalid_params and undefined_session); the refusal is kept, other effects pass untouched")
    func engineEffects() {
        var engine = deviceEngine()
        var limiter = RefusalReplyLimiter()
        var stops = 0
        var refusals = 0
        var dropped: [RefusalReplyLimiter.Scope] = []
        for i in 0..<20 {
            let bad = i % 2 == 0 ? call(from: "mallory", to: "another-device", session: "f\(i)")
                                 : msg(.heartbeat, "mallory", dev, "nosuch-\(i)")
            let (effects, drops) = limiter.limitReplies(in: engine.receive(bad, now: t0 + Int64(i)), now: t0 + Int64(i))
            stops += sent(effects).filter { $0.event == .stop && $0.targetId == "mallory" }.count
            refusals += effects.filter { if case .refused = $0 { true } else { false } }.count
            dropped += drops
        }
        #expect(stops == 5 && refusals == 20)
        #expect(dropped == Array(repeating: .sender, count: 15))
        // A genuine call after the flood: its ring is not a refusal reply, never limited.
        let genuine = engine.receive(call(from: u1, session: "real"), now: t0 + 50)
        #expect(limiter.limitReplies(in: genuine, now: t0 + 50).effects == genuine)
        #expect(sent(genuine).map(\.event) == [.ring])
        // A redelivered call (its ring again) is not refused either.
        let again = engine.receive(call(from: u1, session: "real"), now: t0 + 60)
        #expect(limiter.limitReplies(in: again, now: t0 + 60).effects == again)
        // Busy for a valid call while in a session: a protocol reply, not a refusal.
        let busy = engine.receive(call(from: "mallory", session: "other"), now: t0 + 70)
        #expect(limiter.limitReplies(in: busy, now: t0 + 70).effects == busy)
        #expect(sent(busy).map(\.event) == [.busy])
    }

    @Test("the doorbell replies are limited the same way: 8.2's video_doorbell stop (by uid) and a doorbell's §3 stop")
    func doorbellEffects() {
        var screen = deviceEngine()
        var doorbell = doorbellEngine()
        var limiter = RefusalReplyLimiter()
        var kept = 0
        for i in 0..<8 {
            let effects = screen.handle(.receivedDoorbell(vd(.heartbeat, "mallory", "call-\(i)")), now: t0)
            kept += doorbellSent(limiter.limitReplies(in: effects, now: t0).effects).count
        }
        #expect(kept == 5)
        var rtcStops = 0
        for i in 0..<8 {
            let effects = doorbell.handle(.received(msg(.hangUp, "eve", dev, "s\(i)")), now: t0)
            rtcStops += sent(limiter.limitReplies(in: effects, now: t0).effects).count
        }
        #expect(rtcStops == 5)
        // A stop for a stop is never sent, so there is nothing to limit.
        let quiet = screen.handle(.receivedDoorbell(vd(.stop, "carol", "call-x")), now: t0)
        #expect(doorbellSent(quiet).isEmpty && limiter.limitReplies(in: quiet, now: t0).dropped.isEmpty)
    }
}
