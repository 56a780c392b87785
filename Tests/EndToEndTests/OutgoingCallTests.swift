import AppSimulator
import CallRuntime
import CallEngine
import Emulator
import IPCWire
import Testing
import TestSupport

extension EndToEnd {
    /// PROTOCOL.md 3.2: the device calls app users (a doorbell press). The apps listen as the SDK
    /// would: some with `listenToAllDevices`, some with `add(address)`.
    @Suite("Outgoing call (3.2)")
    struct OutgoingCall {
        typealias Listener = (app: AppUser, events: EventRecorder<AppEvent>)

        static let users = ["user-alice", "user-bob", "user-carol"]

        /// Three listening users (alice and carol in listen mode, bob with the device added).
        func threeListeners(_ h: CallHarness, policy: AnswerPolicy = .manual) async throws -> [Listener] {
            var out: [Listener] = []
            for (i, user) in Self.users.enumerated() {
                let l = try await h.listener(user, policy: policy, reach: i == 1 ? .added : .listening)
                out.append((l.0, l.1))
            }
            return out
        }

        /// Waits until every listener rings for `sessionId` and the device has seen each `ring`.
        func waitRinging(_ h: CallHarness, _ listeners: [Listener], sessionId: String) async throws {
            for l in listeners {
                #expect(await l.events.first { $0.incomingSession } == sessionId, "\(l.app.userId) did not ring")
            }
            let rang = await eventually { await h.device.status.session?.peersRinging.count == listeners.count }
            try #require(rang, "the device did not see every ring")
        }

        @Test("type 1 without a target calls the first of the household only")
        func oneToOneHousehold() async throws {
            try await withHarness { h in
                let (alice, aliceEvents) = try await h.listener("user-alice", policy: .answerAfter(ms: 0))
                let (_, bobEvents) = try await h.listener("user-bob", reach: .added)
                let now = WallClock.nowMs()
                let sessionId = try await h.device.press()
                #expect(sessionId.hasPrefix(h.devId) && sessionId.count == h.devId.count + 6)
                #expect(sessionId.dropFirst(h.devId.count).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })

                #expect(await aliceEvents.first { $0.incomingSession } == sessionId)
                let calls = await h.wire.waitForSent(.call)
                let call = try #require(calls.first)
                #expect(calls.count == 1 && call.targetId == "user-alice" && call.curId == h.devId)
                #expect(call.callType == .oneToOne)
                #expect(call.extra?.bizType == "screen_ipc" && call.extra?.category == "sp_dpsxj")
                let deadline = try #require(call.timeout)
                #expect(abs(deadline - (now + 30_000)) < 2_000, "deadline is not press + callTimeout")

                #expect(await h.waitForPhase(.answered))
                #expect(await h.device.status.session?.answeredBy == "user-alice")
                #expect(await alice.phase == .answered)
                try await h.settle()
                #expect(h.wire.sent(.call, to: "user-bob").isEmpty, "bob was called")
                #expect(await bobEvents.first(within: .zero) { $0.incomingSession } == nil, "bob was called")

                try await alice.hangUp()
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .hungUp && record.direction == .outgoing && record.peers == ["user-alice"])
            }
        }

        @Test("type 1 to a named target; its reject ends the call")
        func oneToOneNamedTarget() async throws {
            try await withHarness { h in
                let (_, aliceEvents) = try await h.listener("user-alice")
                let (bob, bobEvents) = try await h.listener("user-bob")
                let sessionId = try await h.device.press(targets: ["user-bob", "user-alice"], callType: .oneToOne)
                #expect(await bobEvents.first { $0.incomingSession } == sessionId)
                #expect(await h.wire.waitForSent(.call).map(\.targetId) == ["user-bob"])
                try await bob.reject()
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .rejected && record.reason == .rejected && record.endedBy == .remote)
                try await h.settle()
                #expect(h.wire.sent(.call, to: "user-alice").isEmpty, "alice was called")
                #expect(await aliceEvents.first(within: .zero) { $0.incomingSession } == nil, "alice was called")
                #expect(h.wire.sent(.alreadyRejected).isEmpty)
            }
        }

        @Test("type 2 to three users: the first answer wins, the others get already_answered (-2522)")
        func oneToMoreAnswer() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMore)
                try await waitRinging(h, l, sessionId: sessionId)
                #expect(Set(h.wire.sent(.call).map(\.targetId)) == Set(Self.users))
                #expect(h.wire.sent(.call).allSatisfy { $0.sessionId == sessionId && $0.callType == .oneToMore })

                try await l[1].app.answer()
                for i in [0, 2] {
                    let r = try #require(await l[i].events.first { $0.endedRecord })
                    #expect(r.outcome == .answeredElsewhere && r.sdkError == .answeredByOthers)
                }
                #expect(await h.waitForPhase(.answered))
                #expect(await h.device.status.session?.answeredBy == "user-bob")
                #expect(await l[1].app.phase == .answered)
                #expect(await h.wire.waitForSent(.alreadyAnswered, count: 2).map(\.targetId).sorted() == ["user-alice", "user-carol"])
                try await l[1].app.hangUp()
                #expect(await h.deviceEvents.first { $0.endedRecord }?.outcome == .hungUp)
            }
        }

        @Test("type 2: one reject ends the call, the others get already_rejected (-2521)")
        func oneToMoreReject() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMore)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[0].app.reject()
                for i in [1, 2] {
                    let r = try #require(await l[i].events.first { $0.endedRecord })
                    #expect(r.outcome == .rejectedElsewhere && r.sdkError == .rejectedByOthers)
                }
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .rejected && record.sessionId == sessionId)
                #expect(await h.wire.waitForSent(.alreadyRejected, count: 2).map(\.targetId).sorted() == ["user-bob", "user-carol"])
                #expect(await h.device.status.phase == .idle)
            }
        }

        @Test("type 3: the first answer wins, the others get already_answered")
        func oneToMoreSpecialAnswer() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[2].app.answer()
                for i in [0, 1] {
                    #expect(await l[i].events.first { $0.endedRecord }?.sdkError == .answeredByOthers)
                }
                #expect(await h.waitForPhase(.answered))
                #expect(await h.device.status.session?.answeredBy == "user-carol")
                #expect(await h.wire.waitForSent(.alreadyAnswered, count: 2).map(\.targetId).sorted() == ["user-alice", "user-bob"])
            }
        }

        @Test("type 3: a reject removes only that target; the next answer wins among those left")
        func oneToMoreSpecialRejectRemovesOne() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[0].app.reject()
                let left = await eventually {
                    await h.device.status.session?.activePeers == ["user-bob", "user-carol"]
                }
                #expect(left, "alice was not removed")
                try await h.settle()
                #expect(await h.device.status.phase == .ringingOutgoing)
                #expect(h.wire.sent(.alreadyRejected).isEmpty)
                #expect(await l[1].app.phase == .ringingIncoming)
                #expect(await l[2].app.phase == .ringingIncoming)

                try await l[1].app.answer()
                #expect(await l[2].events.first { $0.endedRecord }?.sdkError == .answeredByOthers)
                #expect(await h.waitForPhase(.answered))
                try await h.settle()
                #expect(h.wire.sent(.alreadyAnswered).map(\.targetId) == ["user-carol"], "alice had left")
            }
        }

        @Test("type 3: when every target rejects, the call ends rejected")
        func oneToMoreSpecialAllReject() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[0].app.reject()
                try await l[1].app.reject()
                try await Task.sleep(for: .milliseconds(200))
                #expect(await h.device.status.phase == .ringingOutgoing)
                try await l[2].app.reject()
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .rejected && record.reason == .rejected)
                #expect(h.wire.sent(.alreadyRejected).isEmpty)
            }
        }

        @Test("busy from every target ends the call with reason busy")
        func busyFromEveryTarget() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h, policy: .busy)
                _ = try await h.device.press(targets: Self.users, callType: .oneToMore)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .busy && record.reason == .busy)
                // A busy removes only its target: nobody got already_rejected.
                #expect(h.wire.sent(.alreadyRejected).isEmpty)
                for x in l { #expect(await x.events.first { $0.sentEvent(.busy) } != nil) }
            }
        }

        @Test("type 2: a busy removes only its target; a later reject sends already_rejected to those left")
        func oneToMoreBusyThenReject() async throws {
            try await withHarness { h in
                let (_, aliceEvents) = try await h.listener("user-alice", policy: .busy)
                let (bob, bobEvents) = try await h.listener("user-bob")
                let (_, carolEvents) = try await h.listener("user-carol", reach: .added)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMore)
                #expect(await aliceEvents.first { $0.sentEvent(.busy) }?.sessionId == sessionId)
                #expect(await eventually { await h.device.status.session?.activePeers == ["user-bob", "user-carol"] })
                #expect(await bobEvents.first { $0.incomingSession } == sessionId)
                #expect(await carolEvents.first { $0.incomingSession } == sessionId)
                try await h.settle()
                #expect(h.wire.sent(.alreadyRejected).isEmpty && h.wire.sent(.cancel).isEmpty)

                try await bob.reject()
                #expect(await carolEvents.first { $0.endedRecord }?.sdkError == .rejectedByOthers)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .rejected)
                try await h.settle()
                #expect(h.wire.sent(.alreadyRejected).map(\.targetId) == ["user-carol"], "alice had left")
            }
        }

        @Test("type 3: busy and reject mixed end the call as rejected, not busy")
        func oneToMoreSpecialBusyAndReject() async throws {
            try await withHarness { h in
                _ = try await h.listener("user-alice", policy: .busy)
                _ = try await h.listener("user-bob", policy: .reject)
                _ = try await h.listener("user-carol", policy: .busy)
                _ = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial)
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .rejected && record.reason == .rejected)
            }
        }

        @Test("while the device's call rings: a stranger gets undefined_session, a target that left is ignored")
        func strangersDuringOutgoingCall() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[0].app.reject()
                #expect(await eventually { await h.device.status.session?.activePeers.count == 2 })
                let before = await h.device.status

                // A stranger answers the call: stop undefined_session to it, the call goes on.
                try await h.send(CallMessage(event: .answer, curId: "user-mallory", targetId: h.devId, sessionId: sessionId))
                let stop = try #require(await h.wire.waitForSent(.stop).first)
                #expect(stop.targetId == "user-mallory" && stop.reason == "undefined_session")
                // Alice, who rejected, answers after all: logged, no reply, nothing changes.
                let mark = await h.deviceEvents.count
                let outBefore = h.wire.outCalls().count
                try await h.send(CallMessage(event: .answer, curId: "user-alice", targetId: h.devId, sessionId: sessionId))
                #expect(await h.deviceEvents.first(after: mark) { $0.isRefusal ? true : nil } == true)
                try await h.settle()
                #expect(h.wire.outCalls().count == outBefore)
                #expect(await h.device.status == before)

                // An app calling the device now gets busy; the device's own call goes on.
                let (dave, daveEvents) = try await h.app("user-dave")
                _ = try await dave.startCall(devId: h.devId, timeoutSeconds: 5)
                #expect(await daveEvents.first { $0.endedRecord }?.sdkError == .peerBusy)
                #expect(await h.device.status == before)
                // And the doorbell cannot be pressed again meanwhile.
                await #expect(throws: CallActionError.onCalling(sessionId: sessionId)) {
                    try await h.device.press(targets: ["user-dave"])
                }
                #expect(await h.device.status == before)
            }
        }

        @Test("the device cancels: cancel to every target (-2523)")
        func deviceCancels() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMore)
                try await waitRinging(h, l, sessionId: sessionId)
                try await h.device.cancel()
                for x in l {
                    let r = try #require(await x.events.first { $0.endedRecord })
                    #expect(r.outcome == .cancelled && r.sdkError == .cancelled)
                }
                #expect(await h.wire.waitForSent(.cancel, count: 3).map(\.targetId).sorted() == Self.users)
                #expect(await h.deviceEvents.first { $0.endedRecord }?.outcome == .cancelled)
            }
        }

        @Test("the deadline passes: not_answered to every target still ringing (-2512)")
        func deadlinePasses() async throws {
            try await withHarness { h in
                let l = try await threeListeners(h)
                let sessionId = try await h.device.press(targets: Self.users, callType: .oneToMoreSpecial,
                                                         timeoutSeconds: 1)
                try await waitRinging(h, l, sessionId: sessionId)
                try await l[0].app.reject()   // alice leaves first: she is not ringing any more
                for i in [1, 2] {
                    let r = try #require(await l[i].events.first { $0.endedRecord })
                    #expect(r.outcome == .notAnswered && r.sdkError == .notAnswered)
                }
                let record = try #require(await h.deviceEvents.first { $0.endedRecord })
                #expect(record.outcome == .notAnswered && record.reason == .timeout)
                let notAnswered = await h.wire.waitForSent(.notAnswered, count: 2)
                #expect(notAnswered.map(\.targetId).sorted() == ["user-bob", "user-carol"])
                #expect(notAnswered.allSatisfy { $0.reason == "timeout" })
            }
        }
    }
}
