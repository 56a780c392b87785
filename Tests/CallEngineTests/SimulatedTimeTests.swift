import Testing
import IPCWire
@testable import CallEngine

/// Device and apps against each other on the injected clock: minutes and hours of protocol time
/// in milliseconds of test time.
@Suite("Device and app engines together, simulated time")
struct SimulatedTimeTests {
    @Test("a 10-minute call: heartbeats every 10 s, exactly one reply each, no stop; app hangs up")
    func tenMinuteCall() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 3000)), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: 30)), on: .app(u1))
        sim.run(for: 10 * 60_000)
        #expect(sim.device.phase == .answered)
        #expect(sim.apps[u1]?.phase == .answered)
        let appBeats = sim.sentMessages(.heartbeat, from: u1)
        let deviceBeats = sim.sentMessages(.heartbeat, from: dev)
        // Answered at t0 + 3005 (+5 ms delivery); beats every 10 s for ~10 minutes.
        #expect(appBeats.count == 59)
        #expect(deviceBeats.count == appBeats.count)
        #expect(zip(appBeats, deviceBeats).allSatisfy { $1.at == $0.at + sim.latencyMs })
        #expect(sim.sentMessages(.stop).isEmpty)
        #expect(sim.sentMessages(.timeout).isEmpty)
        sim.act(.hangUp, on: .app(u1))
        sim.run(for: 1000)
        #expect(sim.device.phase == .idle)
        #expect(sim.records(of: .device).map(\.outcome) == [.hungUp])
        #expect(sim.records(of: .device).first?.endedBy == .remote)
        #expect(sim.records(of: .app(u1)).first?.sdkError == nil)
        #expect(sim.sentMessages(.hangUp).count == 1)
    }

    @Test("the app's heartbeats are lost: the device stops the call 30 s after the last one it got")
    func lostHeartbeats() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 0)), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 60_000)
        let lastGot = sim.sentMessages(.heartbeat, from: u1).last?.at ?? 0
        sim.drop = { $0.message.event == .heartbeat && $0.message.curId == u1 }
        sim.run(for: 60_000)
        let stops = sim.sentMessages(.stop, from: dev)
        #expect(stops.map(\.message.reason) == ["heartbeat_timeout"])
        #expect(stops.first?.at == lastGot + sim.latencyMs + 30_000)
        #expect(sim.records(of: .app(u1)).first?.sdkError == .disconnect)
        #expect(sim.device.phase == .idle)
        #expect(sim.apps[u1]?.isOnCalling == false)
    }

    @Test("the device's heartbeat replies are lost: the app ends with -2532 and tells the device")
    func lostHeartbeatReplies() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 0)), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 20_000)
        sim.drop = { $0.message.event == .heartbeat && $0.message.curId == dev }
        sim.run(for: 60_000)
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.disconnect])
        #expect(sim.sentMessages(.stop, from: u1).map(\.message.reason) == ["heartbeat_timeout"])
        // The device ends on the app's stop and does not answer it.
        #expect(sim.records(of: .device).map(\.endedBy) == [.remote])
        #expect(sim.sentMessages(.stop, from: dev).isEmpty)
    }

    @Test("an ignored call: the device's not_answered at the deadline wins over the app's grace")
    func ignoredCall() {
        let sim = Simulation(device: deviceEngine(policy: .ignore), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: 30)), on: .app(u1))
        sim.run(for: 5 * 60_000)
        #expect(sim.sentMessages(.notAnswered, from: dev).map(\.at) == [t0 + 30_000])
        #expect(sim.sentMessages(.timeout).isEmpty)
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.notAnswered])
        #expect(sim.records(of: .device).map(\.reason) == [.timeout])
    }

    @Test("the device's not_answered is lost: the app sends timeout after its grace (-2530)")
    func lostNotAnswered() {
        let sim = Simulation(device: deviceEngine(policy: .ignore), apps: [appEngine()])
        sim.drop = { $0.message.event == .notAnswered }
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1", timeoutSeconds: 30)), on: .app(u1))
        sim.run(for: 60_000)
        #expect(sim.sentMessages(.timeout, from: u1).map(\.at) == [t0 + 32_000])
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.timeout])
        // The device had already ended its session; the late timeout is an unknown session to it.
        #expect(sim.sentMessages(.stop, from: dev).map(\.message.reason) == ["undefined_session"])
        // And the app does not answer that stop: no ping-pong.
        #expect(sim.sentMessages(.stop, from: u1).isEmpty)
    }

    @Test("a doorbell press to three apps (type 2): one busy, one answers, the third gets already_answered")
    func doorbellToHousehold() {
        let sim = Simulation(device: deviceEngine(defaultCallType: .oneToMore),
                             apps: [appEngine(u1, policy: .busy), appEngine(u2, policy: .answerAfter(ms: 4000)),
                                    appEngine(u3)])
        sim.act(.press(DoorbellPress(sessionId: "dev1Ab12Cd")), on: .device)
        sim.run(for: 3 * 60_000)
        #expect(sim.sentMessages(.call, from: dev).map(\.message.targetId) == [u1, u2, u3])
        #expect(sim.sentMessages(.alreadyAnswered, from: dev).map(\.message.targetId) == [u3])
        #expect(sim.records(of: .app(u3)).map(\.sdkError) == [.answeredByOthers])
        #expect(sim.records(of: .app(u1)).map(\.outcome) == [.busy])
        #expect(sim.device.answeredCall == AnsweredCall(sessionId: "dev1Ab12Cd", peer: u2))
        #expect(sim.sentMessages(.heartbeat, from: u2).count == sim.sentMessages(.heartbeat, from: dev).count)
        #expect(sim.sentMessages(.heartbeat, from: dev).allSatisfy { $0.message.targetId == u2 })
    }

    @Test("the media link never comes up: connect_failed 20 s after the answer (-2531 at the app)")
    func mediaNeverUp() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 1000)), apps: [appEngine()])
        sim.mediaUpAfterMs = nil
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 60_000)
        let stop = sim.sentMessages(.stop, from: dev)
        #expect(stop.first?.message.reason == "connect_failed")
        #expect(stop.first?.at == t0 + 5 + 1000 + 20_000)
        // A heartbeat the app sent as the stop crossed it is an unknown session to the device now.
        #expect(stop.dropFirst().allSatisfy { $0.message.reason == "undefined_session" })
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.connectFailed])
    }

    @Test("the media link drops for good: disconnected 5 s later (-2532 at the app)")
    func mediaDropsForGood() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 0)), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 40_000)
        sim.input(.mediaLinkDown(sessionId: "a1"), to: .device)
        let downAt = sim.now
        sim.run(for: 60_000)
        #expect(sim.sentMessages(.stop, from: dev).map(\.at) == [downAt + 5000])
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.disconnect])
    }

    @Test("an hour of calls with every policy: the device always comes back to idle, never stuck")
    func anHourOfCalls() {
        var policies: [AnswerPolicy] = [.answerAfter(ms: 2000), .reject, .busy, .ignore, .answerAfter(ms: 0), .rejectAfter(ms: 3000)]
        let sim = Simulation(device: deviceEngine(policy: policies[0]), apps: [appEngine(u1), appEngine(u2)])
        var expectedOutcomes: [CallOutcome] = []
        for i in 0..<60 {
            let policy = policies[i % policies.count]
            sim.act(.setAnswerPolicy(policy), on: .device)
            sim.act(.startCall(StartCall(targetId: dev, sessionId: "c\(i)", timeoutSeconds: 20)), on: .app(i % 2 == 0 ? u1 : u2))
            sim.run(for: 30_000)
            switch policy {
            case .answerAfter:
                sim.act(.hangUp, on: .app(i % 2 == 0 ? u1 : u2))
                expectedOutcomes.append(.hungUp)
            case .reject, .rejectAfter: expectedOutcomes.append(.rejected)
            case .busy: expectedOutcomes.append(.busy)
            case .ignore: expectedOutcomes.append(.notAnswered)
            case .manual: break
            }
            sim.run(for: 30_000)
            #expect(sim.device.phase == .idle)
        }
        policies.removeAll()
        #expect(sim.records(of: .device).map(\.outcome) == expectedOutcomes)
        #expect(sim.now == t0 + 60 * 60_000)
        #expect(sim.actionErrors.isEmpty)
        // Heartbeats stayed strictly one reply per app heartbeat over the hour.
        #expect(sim.sentMessages(.heartbeat, from: dev).count == sim.sentMessages(.heartbeat, from: u1).count
                + sim.sentMessages(.heartbeat, from: u2).count)
    }

    @Test("a second app calling during a call gets busy, and the call goes on")
    func secondCallerIsBusy() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 0)), apps: [appEngine(u1), appEngine(u2)])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 15_000)
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "b1")), on: .app(u2))
        sim.run(for: 15_000)
        #expect(sim.records(of: .app(u2)).map(\.sdkError) == [.peerBusy])
        #expect(sim.device.answeredCall == AnsweredCall(sessionId: "a1", peer: u1))
        #expect(sim.apps[u1]?.phase == .answered)
    }

    @Test("SIGTERM during a call: hang_up reason shutdown; the app reports -2513")
    func shutdownDuringCall() {
        let sim = Simulation(device: deviceEngine(policy: .answerAfter(ms: 0)), apps: [appEngine()])
        sim.act(.startCall(StartCall(targetId: dev, sessionId: "a1")), on: .app(u1))
        sim.run(for: 15_000)
        sim.input(.shutdown, to: .device)
        sim.run(for: 5_000)
        #expect(sim.sentMessages(.hangUp, from: dev).map(\.message.reason) == ["shutdown"])
        #expect(sim.records(of: .app(u1)).map(\.sdkError) == [.peerHungUp])
        // Heartbeats that were in flight are refused by the shut-down device, not answered.
        #expect(sim.device.phase == .shutDown)
    }
}
