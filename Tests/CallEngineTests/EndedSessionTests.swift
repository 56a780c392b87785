import Testing
import IPCWire
@testable import CallEngine

/// [ours] A `call` or a 43 for a call this side has already ended (MQTT redelivers it late) does
/// not ring again (EndedSessions; the simulator's "ghost rings", docs/simulation.md).
@Suite("ended sessions: a late duplicate does not ring a call that is over")
struct EndedSessionTests {
    @Test("3.1.2 [ours]: the device rejects a call; the same call redelivered after that is dropped, no reply, no ring")
    func deviceDropsLateDuplicateCall() throws {
        var d = ringingDevice()
        let rejected = try d.perform(.reject, now: t0 + 500)
        #expect(endedRecord(rejected) != nil)
        #expect(d.phase == .idle)
        let again = d.receive(call(), now: t0 + 900)
        #expect(again == [.refused(call(), .sessionEnded)])
        #expect(d.phase == .idle)
        // A new session from the same app still rings.
        let fresh = d.receive(call(session: "s2"), now: t0 + 1000)
        #expect(fresh.contains(.startRinging(sessionId: "s2")))
    }

    @Test("3.1.2 [ours]: a hung-up call's call, redelivered, does not ring; nor after many other calls ended since, until it is forgotten")
    func deviceRemembersTheNewestSessions() throws {
        var d = answeredIncomingDevice()
        _ = d.receive(msg(.hangUp, u1, dev), now: t0 + 2000)
        #expect(d.receive(call(), now: t0 + 2100) == [.refused(call(), .sessionEnded)])
        // EndedSessions.capacity - 1 more calls end: s1 is still remembered (each call's deadline
        // is t0 + 30 s, so they all happen before it).
        var now = t0 + 3000
        for i in 0..<(EndedSessions.capacity - 1) {
            let s = "n\(i)"
            #expect(d.receive(call(session: s), now: now).contains(.startRinging(sessionId: s)))
            _ = try d.perform(.reject, now: now + 10)
            now += 100
        }
        #expect(d.receive(call(), now: now) == [.refused(call(), .sessionEnded)])
        // One more: the oldest (s1) is forgotten and would ring again.
        #expect(d.receive(call(session: "last"), now: now).contains(.startRinging(sessionId: "last")))
        _ = try d.perform(.reject, now: now + 10)
        #expect(d.receive(call(), now: now + 20).contains(.startRinging(sessionId: "s1")))
    }

    @Test("8.1 [ours]: the app declines a doorbell call that then times out; the same 43 redelivered does not ring again")
    func appDoorbellDropsLate43() {
        let press = DoorbellPressMessage(devId: dev, etype: "ac_doorbell", edata: callId)
        var app = AppDoorbellEngine(config: AppDoorbellConfig(userId: u1, devices: [], policy: .manual))
        #expect(app.handle(.doorbellPressed(press), now: t0).contains(.startRinging(sessionId: callId)))
        let ended = app.handle(.receivedDoorbell(vd(.timeout, nil)), now: t0 + 25_000)
        #expect(endedRecord(ended) != nil)
        #expect(app.phase == .idle)
        #expect(app.handle(.doorbellPressed(press), now: t0 + 25_500).isEmpty)
        #expect(app.phase == .idle)
        // The next press (another call id) rings.
        let next = DoorbellPressMessage(devId: dev, etype: "ac_doorbell", edata: "0badf00d1732200100")
        #expect(app.handle(.doorbellPressed(next), now: t0 + 30_000).contains(.startRinging(sessionId: next.edata)))
    }

    @Test("EndedSessions keeps the newest ids, no duplicates, nothing stored until a call ends")
    func memory() {
        var ended = EndedSessions()
        #expect(ended == EndedSessions())
        #expect(!ended.contains("a"))
        ended.note("a")
        ended.note("a")
        #expect(ended.contains("a"))
        for i in 0..<EndedSessions.capacity { ended.note("x\(i)") }
        #expect(!ended.contains("a"))
        #expect(ended.contains("x0"))
        #expect(ended.contains("x\(EndedSessions.capacity - 1)"))
    }
}
