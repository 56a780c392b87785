import Testing
import IPCWire
@testable import CallEngine

/// A doorbell device and its household's apps against each other on the injected clock
/// (PROTOCOL.md 8.1, 8.2, 8.5): minutes of protocol time in milliseconds.
@Suite("doorbell device and apps together, simulated time (PROTOCOL.md 8)")
struct DoorbellSimulatedTimeTests {
    func apps(_ policies: [String: AnswerPolicy] = [:]) -> [AppDoorbellEngine] {
        [u1, u2, u3].map { AppDoorbellEngine(config: AppDoorbellConfig(userId: $0, policy: policies[$0] ?? .manual)) }
    }

    @Test("8.1-8.2: a press rings every app; u2 accepts after 3 s; the others end 'answered by other' (-2522); 10 minutes of heartbeats, one reply each; u2 hangs up")
    func answeredCall() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps([u2: .answerAfter(ms: 3000)]))
        sim.press()
        sim.run(for: 10 * 60_000)
        #expect(sim.presses == [callId])
        #expect(sim.sent(.answered, from: .device).map(\.message.uid) == [u2])
        for user in [u1, u3] {
            #expect(sim.records(of: .app(user)).map(\.sdkError) == [.answeredByOthers])
        }
        #expect(sim.device.answeredCall == AnsweredCall(sessionId: callId, peer: u2))
        #expect(sim.apps[u2]?.phase == .answered)
        let beats = sim.sent(.heartbeat, from: .app(u2))
        let replies = sim.sent(.heartbeat, from: .device)
        #expect(beats.count == 59)
        #expect(replies.count == beats.count)
        #expect(zip(beats, replies).allSatisfy { $1.at == $0.at + sim.latencyMs })
        #expect(sim.sent(.stop).isEmpty && sim.sent(.timeout).isEmpty)
        sim.act(.hangUp, on: .app(u2))
        sim.run(for: 1000)
        #expect(sim.device.phase == .idle)
        #expect(sim.records(of: .device).map(\.outcome) == [.hungUp])
        #expect(sim.records(of: .device).first?.endedBy == .remote)
        #expect(sim.records(of: .app(u2)).first?.sdkError == nil)
    }

    @Test("8.2: nobody accepts: timeout exactly 25 s after the press, every app ends -2530; 8.5: a press 10 s later leaves a message, one 15 s after the window rings again")
    func unanswered() {
        let sim = DoorbellSimulation(device: doorbellEngine(messages: true), apps: apps())
        sim.press()
        sim.run(for: 30_000)
        #expect(sim.sent(.timeout, from: .device).map(\.at) == [t0 + 25_000])
        #expect(sim.sent(.timeout, from: .device).first?.message.uid == nil)
        #expect(sim.ringTimeouts == [callId])
        for user in [u1, u2, u3] { #expect(sim.records(of: .app(user)).map(\.sdkError) == [.timeout]) }
        #expect(sim.records(of: .device).map(\.outcome) == [.notAnswered])
        // 8.5: within the window (t0 + 25 s .. t0 + 40 s).
        sim.run(until: t0 + 35_000)
        sim.press("second")
        #expect(sim.messagesLeft == [callId])
        #expect(sim.presses == [callId])
        sim.run(until: t0 + 41_000)
        sim.press("third")
        #expect(sim.presses == [callId, "third"])
        sim.run(for: 1000)
        #expect(sim.apps.values.allSatisfy { $0.phase == .ringingIncoming })
    }

    @Test("8.2: every household user declines: timeout before the ring timeout; the decliners' records carry no SDK error")
    func everyoneDeclines() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps([u1: .rejectAfter(ms: 1000), u2: .rejectAfter(ms: 2000), u3: .rejectAfter(ms: 3000)]))
        sim.press()
        sim.run(for: 2500)
        #expect(sim.device.phase == .ringingOutgoing)
        sim.run(for: 30_000)
        #expect(sim.sent(.timeout, from: .device).map(\.at) == [t0 + 3000 + 5 + 5])
        #expect(sim.records(of: .device).map(\.outcome) == [.rejected])
        for user in [u1, u2, u3] { #expect(sim.records(of: .app(user)).map(\.outcome) == [.rejected]) }
    }

    @Test("8.2: two users accept at once: the first wins, the second gets stop answered_by_other (-2522)")
    func raceToAccept() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps([u1: .answerAfter(ms: 1000), u3: .answerAfter(ms: 1000)]))
        sim.press()
        sim.run(for: 5000)
        #expect(sim.device.answeredCall?.peer == u1)
        #expect(sim.sent(.stop, from: .device).map(\.message.uid) == [u3])
        #expect(sim.sent(.stop, from: .device).map(\.message.reason) == ["answered_by_other"])
        #expect(sim.records(of: .app(u3)).map(\.sdkError) == [.answeredByOthers])
        #expect(sim.records(of: .app(u2)).map(\.sdkError) == [.answeredByOthers])
        #expect(sim.apps[u1]?.phase == .answered)
        #expect(sim.records(of: .device).isEmpty)
    }

    @Test("8.2: the accepting app's heartbeats are lost: stop heartbeat_timeout 30 s after the last one the device got")
    func lostHeartbeats() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps([u1: .answerAfter(ms: 0)]))
        sim.press()
        sim.run(for: 60_000)
        let lastGot = sim.sent(.heartbeat, from: .app(u1)).last?.at ?? 0
        sim.drop = { $0.message.event == .heartbeat && $0.from == .app(u1) }
        sim.run(for: 60_000)
        let stops = sim.sent(.stop, from: .device)
        #expect(stops.map(\.message.reason) == ["heartbeat_timeout"])
        #expect(stops.first?.at == lastGot + sim.latencyMs + 30_000)
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.disconnect])
        #expect(sim.device.phase == .idle)
    }

    @Test("8.2: the link never comes up: stop connect_failed 20 s after the accept (-2531)")
    func linkNeverUp() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps([u1: .answerAfter(ms: 0)]))
        sim.mediaUpAfterMs = nil
        sim.press()
        sim.run(for: 60_000)
        let stops = sim.sent(.stop, from: .device)
        #expect(stops.map(\.message.reason) == ["connect_failed"])
        let acceptedAt = sim.sent(.accept, from: .app(u1)).first?.at ?? 0
        #expect(stops.first?.at == acceptedAt + sim.latencyMs + 20_000)
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.connectFailed])
    }

    @Test("8.2: the operator cancels while it rings: every app ends -2523")
    func operatorCancels() {
        let sim = DoorbellSimulation(device: doorbellEngine(), apps: apps())
        sim.press()
        sim.run(for: 4000)
        sim.act(.cancel, on: .device)
        sim.run(for: 1000)
        for user in [u1, u2, u3] { #expect(sim.records(of: .app(user)).map(\.sdkError) == [.cancelled]) }
        #expect(sim.records(of: .device).map(\.outcome) == [.cancelled])
    }
}
