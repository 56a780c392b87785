import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport

/// PROTOCOL.md 8 with the app simulator on both ends of the household: listen mode, a decline that
/// lets the call ring on, the operator's cancel, 312 on the accepted link.
extension EndToEnd {
    @Suite("Doorbells, app side: listen mode, decline, cancel, 312 (8.2, 8.6)")
    struct DoorbellAppCalls {
        static func household(_ p: inout DeviceProfile) {
            p.behaviour.household = ["user-alice", "user-bob"]
            p.doorbell.ringTimeout = 5
        }

        static func ringing(_ events: EventRecorder<AppEvent>) async -> String? {
            await events.first { e -> String? in if case .doorbellRinging(_, let callId, _) = e { callId } else { nil } }
        }

        @Test("listen mode: a press rings alice and bob; alice declines (stop), the call rings on; bob accepts and the device answers him")
        func declineThenOtherAccepts() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.household) { h in
                let (alice, aliceEvents) = try await h.listener("user-alice", reach: .listening)
                let (bob, bobEvents) = try await h.listener("user-bob", reach: .listening)
                let callId = try await h.device.press()
                #expect(await Self.ringing(aliceEvents) == callId)
                #expect(await Self.ringing(bobEvents) == callId)

                try await alice.declineDoorbell(callId: callId)
                let declined = try #require(await aliceEvents.first { $0.endedRecord })
                #expect(declined.outcome == .rejected && declined.sdkError == nil)
                // The moment has passed once the device answers bob's later accept: no timeout came.
                try await bob.acceptDoorbell(devId: h.devId, callId: callId)
                let answered = try #require(await bobEvents.first { e -> VideoDoorbellMessage? in
                    if case .doorbellReceived(let m) = e, m.event == .answered { m } else { nil }
                })
                #expect(answered.uid == "user-bob")
                #expect(await bob.doorbellPhase == .answered)
                #expect(h.wire.doorbellMessages(.timeout).isEmpty)
                try await bob.hangUpDoorbell()
                #expect(await bobEvents.first { $0.endedRecord }?.outcome == .hungUp)
            }
        }

        @Test("the operator cancels before an accept: the app's call ends cancelled (-2523)")
        func operatorCancel() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.household) { h in
                let (_, events) = try await h.app("user-alice")
                let callId = try await h.device.press()
                #expect(await Self.ringing(events) == callId)
                try await h.device.cancel()
                let record = try #require(await events.first { $0.endedRecord })
                #expect(record.sessionId == callId && record.sdkError == .cancelled)
            }
        }

        @Test("8.6: on alice's accepted link, resolution sub is done (the decoded size changes) and speaker on is done; bob's speaker for her link is refused (-1)")
        func streamControl() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.household) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let (bob, _) = try await h.app("user-bob")
                let callId = try await h.device.press()
                #expect(await Self.ringing(aliceEvents) == callId)
                try await alice.acceptDoorbell()
                #expect(await aliceEvents.first { e -> Bool? in
                    if case .doorbellReceived(let m) = e, m.event == .answered, m.uid == "user-alice" { true } else { nil }
                } == true)
                let sid = try await alice.openDoorbellVideo()
                #expect(sid == callId)
                let deadline = ContinuousClock.now + .seconds(20)
                while (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) < 5, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                let before = try #require(await alice.videoStats(sessionId: sid))
                #expect(before.framesDecoded >= 5)

                #expect(try await alice.resolution(.sub) == 0)
                let sub = h.profile.capabilities.video?.sub
                let switched = ContinuousClock.now + .seconds(5)
                var size: (Int, Int)?
                while ContinuousClock.now < switched {
                    if let change = await alice.videoStats(sessionId: sid)?.sizeChanges.last { size = (change.width, change.height); break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(size?.0 == sub?.width && size?.1 == sub?.height, "size after resolution sub: \(String(describing: size))")
                #expect(try await alice.speaker(on: true) == 0)
                #expect(try await bob.speaker(on: true, sessionId: callId, devId: h.devId) == -1)
                try await alice.hangUpDoorbell()
            }
        }

        @Test("bad input on the out topic: a 43 naming another device and a report with a non-DP value are refused and change nothing; the next good report is taken")
        func badInputFromTheDevice() async throws {
            try await withHarness(profile: "ac-doorbell.yaml", edit: Self.household) { h in
                let (alice, events) = try await h.app("user-alice")
                let out = h.profile.resolvedTopics.out
                func publish(_ json: String) async throws {
                    try await h.raw.publishAndWaitForAck(topic: out, payload: Array(json.utf8), qos: 1, retain: false, timeout: .seconds(3))
                }
                let t = WallClock.nowSeconds()
                try await publish(#"{"protocol":43,"t":\#(t),"data":{"devId":"someone-else","etype":"ac_doorbell","edata":"abcdef011732200000"}}"#)
                try await publish(#"{"protocol":4,"t":\#(t),"data":{"devId":"\#(h.devId)","dps":{"147":[1]},"t":\#(t)}}"#)
                try await publish(#"{"protocol":4,"t":\#(t),"data":{"devId":"\#(h.devId)","dps":{"147":42},"t":\#(t)}}"#)
                #expect(try await alice.waitForDP(devId: h.devId, 147, value: .int(42)) == .int(42))
                // The refusals are events: wait for both (the good report can be taken before the
                // recorder has read the second refusal off the stream).
                let refusals = await events.wait(for: 2, within: .seconds(30)) { e -> String? in
                    if case .refused(let why) = e { why } else { nil }
                }
                #expect(refusals.count == 2, "\(refusals)")
                #expect(refusals.contains { $0.contains("someone-else") })
                #expect(refusals.contains { $0.contains("data.dps.147") }, "\(refusals)")
                #expect(await events.all { e -> Bool? in if case .doorbellRinging = e { true } else { nil } }.isEmpty)
                #expect(await alice.doorbellPhase == .idle)
            }
        }
    }
}
