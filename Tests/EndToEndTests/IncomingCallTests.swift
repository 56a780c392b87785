import AppSimulator
import CallEngine
import CallRuntime
import Emulator
import IPCWire
import Testing

extension EndToEnd {
    /// PROTOCOL.md 3.1: the app calls the device.
    @Suite("Incoming call (3.1)")
    struct IncomingCall {
        @Test("policy answers after its delay; the app hangs up and the device does not reply")
        func answeredByPolicy() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0.3) }) { h in
                let (app, events) = try await h.app("user-alice")
                let started = ContinuousClock.now
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                let ring = try #require(await events.first { $0.receivedEvent(.ring) })
                #expect(ring.sessionId == sessionId && ring.curId == h.devId && ring.targetId == "user-alice")
                let answer = try #require(await events.first { $0.receivedEvent(.answer) })
                #expect(ContinuousClock.now - started >= .milliseconds(250), "answered before the policy's delay")
                #expect(answer.sessionId == sessionId)
                #expect(await app.phase == .answered)
                let status = await h.device.status
                #expect(status.phase == .answered)
                #expect(status.session?.answeredBy == h.devId)
                #expect(status.session?.peers == ["user-alice"])

                // The tap is a subscriber of its own: it may see the answer after the app did.
                await h.wire.waitForSent(.answer)
                let outBefore = h.wire.outCalls().count
                try await app.hangUp()
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .hungUp && record.endedBy == .remote && record.sessionId == sessionId)
                try await h.settle()
                #expect(h.wire.outCalls().count == outBefore, "the device replied to hang_up")
                #expect(await h.device.status.phase == .idle)
                let appRecord = try #require(await events.first { $0.endedRecord })
                #expect(appRecord.sdkError == nil)
            }
        }

        @Test("manual policy rings until the operator answers; the device hangs up (-2513)")
        func answeredByOperator() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (app, events) = try await h.app("user-alice")
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await h.deviceEvents.first { e -> String? in
                    if case .ringing(let s) = e { s } else { nil }
                } == sessionId)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                try await h.settle()
                #expect(h.wire.sent(.answer).isEmpty, "answered without the operator")
                #expect(await h.device.status.phase == .ringingIncoming)

                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) }?.sessionId == sessionId)
                #expect(await h.deviceEvents.first { e -> Bool? in
                    if case .ringingStopped(let s) = e, s == sessionId { true } else { nil }
                } == true)
                #expect(await app.phase == .answered)

                try await h.device.hangUp()
                let record = try #require(await events.first { $0.endedRecord })
                #expect(record.outcome == .hungUp && record.endedBy == .remote)
                #expect(record.sdkError == .peerHungUp)
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("policy reject: ring, then reject (-2510)")
        func rejectedByPolicy() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .reject }) { h in
                let (app, events) = try await h.app("user-alice")
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                let record = try #require(await events.first { $0.endedRecord })
                #expect(record.sessionId == sessionId && record.outcome == .rejected && record.sdkError == .rejected)
                await h.wire.waitForSent(.reject)
                #expect(h.wire.outCalls().map(\.event) == [.ring, .reject])
                let deviceRecord = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(deviceRecord.outcome == .rejected && deviceRecord.endedBy == .local)
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("the operator rejects a ringing call (-2510)")
        func rejectedByOperator() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (app, events) = try await h.app("user-alice")
                _ = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                #expect(await h.waitForPhase(.ringingIncoming))
                try await h.device.reject()
                let record = try #require(await events.first { $0.endedRecord })
                #expect(record.outcome == .rejected && record.sdkError == .rejected)
                await h.wire.waitForSent(.reject)
                #expect(h.wire.outCalls().map(\.event) == [.ring, .reject])
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("the app cancels while the device rings: ringing stops, no reply")
        func cancelledWhileRinging() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (app, events) = try await h.app("user-alice")
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                try await app.cancel()
                #expect(await h.deviceEvents.first { e -> Bool? in
                    if case .ringingStopped(let s) = e, s == sessionId { true } else { nil }
                } == true)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .cancelled && record.endedBy == .remote)
                try await h.settle()
                #expect(h.wire.outCalls().map(\.event) == [.ring], "the device replied to cancel")
                #expect(await h.device.status.phase == .idle)
                #expect(await events.first { $0.endedRecord }?.sdkError == nil)
                // The operator can no longer answer it.
                await #expect(throws: CallActionError.self) { try await h.device.answer() }
            }
        }

        @Test("unanswered past the deadline: not_answered with reason timeout (-2512)")
        func unansweredPastDeadline() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .ignore }) { h in
                let (app, events) = try await h.app("user-alice")
                let started = ContinuousClock.now
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 1)
                let notAnswered = try #require(await events.first { $0.receivedEvent(.notAnswered) })
                #expect(ContinuousClock.now - started >= .milliseconds(900))
                #expect(notAnswered.sessionId == sessionId && notAnswered.reason == "timeout")
                let record = try #require(await events.first { $0.endedRecord })
                #expect(record.outcome == .notAnswered && record.sdkError == .notAnswered)
                let deviceRecord = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(deviceRecord.outcome == .notAnswered && deviceRecord.reason == .timeout)
                #expect(await h.deviceEvents.first { e -> Bool? in
                    if case .ringingStopped = e { true } else { nil }
                } == true)
                await h.wire.waitForSent(.notAnswered)
                #expect(h.wire.outCalls().map(\.event) == [.ring, .notAnswered])
            }
        }

        @Test("a second caller gets busy (-2511) and the first call goes on")
        func busyForSecondCaller() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let (bob, bobEvents) = try await h.app("user-bob")
                let aliceSession = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil)
                let before = await h.device.status
                #expect(before.phase == .answered)

                let bobSession = try await bob.startCall(devId: h.devId, timeoutSeconds: 10)
                let busy = try #require(await bobEvents.first { $0.receivedEvent(.busy) })
                #expect(busy.sessionId == bobSession && busy.reason == "busy")
                let bobRecord = try #require(await bobEvents.first { $0.endedRecord })
                #expect(bobRecord.outcome == .busy && bobRecord.sdkError == .peerBusy)

                try await h.settle()
                #expect(await h.device.status == before, "the first call changed")
                #expect(await alice.phase == .answered)
                #expect(h.wire.sent(.busy).count == 1 && h.wire.sent(.busy, to: "user-alice").isEmpty)

                try await alice.hangUp()
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.sessionId == aliceSession && record.outcome == .hungUp)
            }
        }

        @Test("a repeated call gets the last reply again (ring, then answer) and nothing else changes")
        func repeatedCall() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (app, events) = try await h.app("user-alice")
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 10)
                let call = try #require(await events.first { $0.sentEvent(.call) })
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                #expect(await h.waitForPhase(.ringingIncoming))
                let ringing = await h.device.status

                // MQTT redelivers the call while the device rings.
                try await app.send(call.envelope(t: WallClock.nowSeconds()), to: h.devId)
                #expect(await h.wire.waitForSent(.ring, count: 2).count == 2)
                try await h.settle()
                #expect(await h.device.status == ringing)

                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let answered = await h.device.status
                #expect(answered.phase == .answered)

                // And again once answered.
                try await app.send(call.envelope(t: WallClock.nowSeconds()), to: h.devId)
                let answers = await h.wire.waitForSent(.answer, count: 2)
                #expect(answers.count == 2 && answers.allSatisfy { $0.sessionId == sessionId })
                try await h.settle()
                #expect(await h.device.status == answered)
                #expect(await app.phase == .answered)
                #expect(h.wire.outCalls().map(\.event) == [.ring, .ring, .answer, .answer])
            }
        }

        @Test("the caller gives up with timeout: ringing stops, session ends with reason timeout, no reply (-2530)")
        func appTimeoutEvent() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .ignore }) { h in
                // A negative grace makes the app give up before the device's own deadline.
                let config = AppEngineConfig(userId: "user-alice", deadlineGraceMs: -500)
                let (app, events) = try await h.app("user-alice", config: config)
                let sessionId = try await app.startCall(devId: h.devId, timeoutSeconds: 1)
                let sent = try #require(await events.first { $0.sentEvent(.timeout) })
                #expect(sent.sessionId == sessionId)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .notAnswered && record.reason == .timeout && record.endedBy == .remote)
                #expect(await h.deviceEvents.first { e -> Bool? in
                    if case .ringingStopped = e { true } else { nil }
                } == true)
                #expect(await events.first { $0.endedRecord }?.sdkError == .timeout)
                // Past the device's own deadline: still nothing but the ring.
                try await Task.sleep(for: .milliseconds(800))
                try await h.settle()
                #expect(h.wire.outCalls().map(\.event) == [.ring])
                #expect(await h.device.status.phase == .idle)
            }
        }
    }
}
