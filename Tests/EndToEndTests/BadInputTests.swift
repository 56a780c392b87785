import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCWire
import Testing
import TestSupport

/// What the device must do with a bad message (PROTOCOL.md 3.4).
enum Verdict: Sendable, Equatable {
    /// Logged and dropped: no reply at all.
    case dropped
    /// One reply of this event and reason to the sender, in the sender's session.
    case reply(CallEvent, reason: String?)
}

/// What a case's payload may refer to.
struct PayloadContext: Sendable {
    let devId: String
    let now: Int64
    /// The session of the call in progress (alice's).
    let liveSession: String

    static let sender = "user-mallory"
    static let senderSession = "mallory-session-1"

    /// The inner `data` of a valid `call` from the sender: accepted, it would get `busy`.
    func call() -> [String: JSONValue] {
        ["event": .string("call"), "curId": .string(Self.sender), "targetId": .string(devId),
         "sessionId": .string(Self.senderSession), "timeout": .int(now + 10_000), "callType": .int(1),
         "extra": .object(["bizType": .string("screen_ipc"), "channelType": .int(2), "category": .string("sp_dpsxj"),
                           "keepConnect": .bool(false)])]
    }

    /// A whole 308 envelope around `inner`; `outer` edits the envelope itself.
    func envelope(_ inner: [String: JSONValue], outer: (inout [String: JSONValue]) -> Void = { _ in }) -> [UInt8] {
        var o: [String: JSONValue] = [
            "protocol": .int(308), "pv": .string("2.2"), "t": .int(now / 1000),
            "data": .object(["type": .string("rtc"), "data": .object(inner)]),
        ]
        outer(&o)
        return JSONValue.object(o).serialized()
    }

    /// The valid call with `edit` applied to its inner data.
    func call(_ edit: (inout [String: JSONValue]) -> Void) -> [UInt8] {
        var inner = call()
        edit(&inner)
        return envelope(inner)
    }

    /// A non-call event from `from` in `session`.
    func event(_ name: String, from: String = sender, session: String) -> [UInt8] {
        envelope(["event": .string(name), "curId": .string(from), "targetId": .string(devId),
                  "sessionId": .string(session)])
    }
}

/// One row of PROTOCOL.md 3.4.
struct BadInput: Sendable, CustomTestStringConvertible {
    let name: String
    let verdict: Verdict
    var edit: @Sendable (inout DeviceProfile) -> Void = { _ in }
    let payload: @Sendable (PayloadContext) -> [UInt8]

    var testDescription: String { name }
}

extension EndToEnd {
    /// PROTOCOL.md 3.4: the device never crashes and never changes state on a message it refuses.
    /// Each case runs against a call in progress (answered, from alice), and checks the reply (or
    /// its absence) and that the call is untouched. Every dropped payload is a valid `call` but for
    /// one defect, so a device that wrongly accepted it would answer `busy`.
    @Suite("Bad input (3.4)")
    struct BadInputs {
        static let controls: [BadInput] = [
            BadInput(name: "control: the valid call gets busy", verdict: .reply(.busy, reason: "busy")) { c in
                c.envelope(c.call())
            },
            BadInput(name: "control: callEvent 1 in place of event is a call", verdict: .reply(.busy, reason: "busy")) { c in
                c.call { $0["event"] = nil; $0["callEvent"] = .int(1) }
            },
            // 3.4: "a deadline more than 24 h ahead counts as 24 h ahead": still a valid call.
            BadInput(name: "control: timeout Int64.max is a call (capped at 24 h)", verdict: .reply(.busy, reason: "busy")) { c in
                c.call { $0["timeout"] = .int(.max) }
            },
            BadInput(name: "control: timeout beyond Int64 (1e300) is a call (capped at 24 h)", verdict: .reply(.busy, reason: "busy")) { c in
                c.call { $0["timeout"] = .double(1e300) }
            },
            BadInput(name: "control: envelope t beyond Int64 is informational", verdict: .reply(.busy, reason: "busy")) { c in
                c.envelope(c.call()) { $0["t"] = .double(-1e300) }
            },
        ]

        static let dropped: [BadInput] = [
            BadInput(name: "JSON that does not parse", verdict: .dropped) { c in Array(c.envelope(c.call()).dropLast(3)) },
            BadInput(name: "empty payload", verdict: .dropped) { _ in [] },
            BadInput(name: "JSON that is not an object", verdict: .dropped) { _ in Array("[308,\"call\"]".utf8) },
            BadInput(name: "missing protocol", verdict: .dropped) { c in c.envelope(c.call()) { $0["protocol"] = nil } },
            BadInput(name: "unknown protocol", verdict: .dropped) { c in c.envelope(c.call()) { $0["protocol"] = .int(999) } },
            BadInput(name: "missing t", verdict: .dropped) { c in c.envelope(c.call()) { $0["t"] = nil } },
            BadInput(name: "t mistyped", verdict: .dropped) { c in c.envelope(c.call()) { $0["t"] = .string("now") } },
            BadInput(name: "missing data", verdict: .dropped) { c in c.envelope(c.call()) { $0["data"] = nil } },
            BadInput(name: "data.type not rtc", verdict: .dropped) { c in
                c.envelope(c.call()) { $0["data"] = .object(["type": .string("tlv"), "data": .object(c.call())]) }
            },
            BadInput(name: "missing event", verdict: .dropped) { c in c.call { $0["event"] = nil } },
            BadInput(name: "event mistyped", verdict: .dropped) { c in c.call { $0["event"] = .int(1) } },
            BadInput(name: "missing curId", verdict: .dropped) { c in c.call { $0["curId"] = nil } },
            BadInput(name: "empty curId", verdict: .dropped) { c in c.call { $0["curId"] = .string("") } },
            BadInput(name: "curId mistyped", verdict: .dropped) { c in c.call { $0["curId"] = .int(42) } },
            BadInput(name: "missing targetId", verdict: .dropped) { c in c.call { $0["targetId"] = nil } },
            BadInput(name: "missing sessionId", verdict: .dropped) { c in c.call { $0["sessionId"] = nil } },
            BadInput(name: "empty sessionId", verdict: .dropped) { c in c.call { $0["sessionId"] = .string("") } },
            BadInput(name: "sessionId mistyped", verdict: .dropped) { c in c.call { $0["sessionId"] = .array([]) } },
            BadInput(name: "missing timeout on call", verdict: .dropped) { c in c.call { $0["timeout"] = nil } },
            BadInput(name: "timeout mistyped", verdict: .dropped) { c in c.call { $0["timeout"] = .string("soon") } },
            BadInput(name: "unknown event", verdict: .dropped) { c in c.call { $0["event"] = .string("dance") } },
            BadInput(name: "unknown callEvent number", verdict: .dropped) { c in
                c.call { $0["event"] = nil; $0["callEvent"] = .int(99) }
            },
            BadInput(name: "payload over 64 KiB", verdict: .dropped) { c in
                c.call { $0["appDeviceId"] = .string(String(repeating: "x", count: 66 * 1024)) }
            },
            BadInput(name: "stop for an unknown session is never answered", verdict: .dropped) { c in
                c.event("stop", session: "no-such-session")
            },
        ]

        static let answered: [BadInput] = [
            BadInput(name: "call for another targetId", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["targetId"] = .string("another-device") }
            },
            BadInput(name: "call without extra", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = nil }
            },
            BadInput(name: "extra not an object", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .string("screen_ipc") }
            },
            BadInput(name: "extra without bizType", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .object(["channelType": .int(2)]) }
            },
            BadInput(name: "bizType not screen_ipc", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .object(["bizType": .string("ipc_live"), "channelType": .int(2)]) }
            },
            BadInput(name: "channelType the profile does not support", verdict: .reply(.stop, reason: "invalid_params"),
                     edit: { $0.capabilities.channelTypes = [.video, .audioVideo] }) { c in
                c.call { $0["extra"] = .object(["bizType": .string("screen_ipc"), "channelType": .int(0)]) }
            },
            BadInput(name: "channelType that does not exist", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .object(["bizType": .string("screen_ipc"), "channelType": .int(7)]) }
            },
            BadInput(name: "call whose deadline has passed", verdict: .reply(.stop, reason: "expired")) { c in
                c.call { $0["timeout"] = .int(c.now - 1_000) }
            },
            // 3.4: "a deadline that has passed (zero and negative values included) is expired".
            BadInput(name: "call with timeout 0", verdict: .reply(.stop, reason: "expired")) { c in
                c.call { $0["timeout"] = .int(0) }
            },
            BadInput(name: "call with timeout -1", verdict: .reply(.stop, reason: "expired")) { c in
                c.call { $0["timeout"] = .int(-1) }
            },
            BadInput(name: "call with timeout Int64.min", verdict: .reply(.stop, reason: "expired")) { c in
                c.call { $0["timeout"] = .int(.min) }
            },
            BadInput(name: "call with timeout below Int64 (-1e300)", verdict: .reply(.stop, reason: "expired")) { c in
                c.call { $0["timeout"] = .double(-1e300) }
            },
            // 3.4: "a callType or channelType outside its listed values is invalid_params".
            BadInput(name: "callType 0", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["callType"] = .int(0) }
            },
            BadInput(name: "callType 9", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["callType"] = .int(9) }
            },
            BadInput(name: "callType Int64.min", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["callType"] = .int(.min) }
            },
            BadInput(name: "callType Int64.max", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["callType"] = .int(.max) }
            },
            BadInput(name: "callType mistyped", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["callType"] = .string("1") }
            },
            BadInput(name: "channelType Int64.max", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .object(["bizType": .string("screen_ipc"), "channelType": .int(.max)]) }
            },
            BadInput(name: "channelType -1", verdict: .reply(.stop, reason: "invalid_params")) { c in
                c.call { $0["extra"] = .object(["bizType": .string("screen_ipc"), "channelType": .int(-1)]) }
            },
            BadInput(name: "hang_up for an unknown session", verdict: .reply(.stop, reason: "undefined_session")) { c in
                c.event("hang_up", session: "no-such-session")
            },
            BadInput(name: "heartbeat for an unknown session", verdict: .reply(.stop, reason: "undefined_session")) { c in
                c.event("heartbeat", session: "no-such-session")
            },
            BadInput(name: "hang_up from a user not in the session", verdict: .reply(.stop, reason: "undefined_session")) { c in
                c.event("hang_up", session: c.liveSession)
            },
            BadInput(name: "cancel from a user not in the session", verdict: .reply(.stop, reason: "undefined_session")) { c in
                c.event("cancel", session: c.liveSession)
            },
        ]

        @Test("refused input leaves the call in progress untouched", arguments: controls + dropped + answered)
        func refusal(_ input: BadInput) async throws {
            try await withHarness(edit: { p in
                p.behaviour.answerPolicy = .answer(afterSeconds: 0)
                input.edit(&p)
            }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let liveSession = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil)
                await h.wire.waitForSent(.answer)
                let before = await h.device.status
                try #require(before.phase == .answered)
                let outBefore = h.wire.outCalls().count
                let aliceMark = await aliceEvents.count
                let deviceMark = await h.deviceEvents.count

                let context = PayloadContext(devId: h.devId, now: WallClock.nowMs(), liveSession: liveSession)
                let json = input.payload(context)
                // Sent as is in plain mode (even over 64 KiB); sealed otherwise.
                try await h.sendRaw(h.profile.security == .plain ? json : h.seal(json))

                switch input.verdict {
                case .dropped:
                    let refused = await h.deviceEvents.first(after: deviceMark) { $0.isRefusal ? true : nil }
                    #expect(refused == true, "the device did not log a refusal")
                    try await h.settle()
                    #expect(Array(h.wire.outCalls().dropFirst(outBefore)).isEmpty, "the device replied")
                case .reply(let event, let reason):
                    let replies = await eventuallyReplies(h, after: outBefore)
                    try await h.settle()
                    let all = Array(h.wire.outCalls().dropFirst(outBefore))
                    #expect(all.count == 1, "replies: \(all.map(\.event))")
                    let reply = try #require(replies.first)
                    #expect(reply.event == event && reply.reason == reason)
                    #expect(reply.curId == h.devId && reply.targetId == PayloadContext.sender)
                    #expect(reply.sessionId != liveSession || input.name.contains("not in the session"))
                }
                #expect(await h.device.status == before, "the call in progress changed")
                #expect(await alice.phase == .answered)
                #expect(await aliceEvents.first(after: aliceMark, within: .zero) { $0.endedRecord } == nil)
            }
        }

        @Test("a payload of 2 MiB (over the transport's own limit too): no reply, the call goes on, the device still works")
        func hugePayload() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .answer(afterSeconds: 0) }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                _ = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil)
                await h.wire.waitForSent(.answer)
                let before = await h.device.status
                let outBefore = h.wire.outCalls().count
                let context = PayloadContext(devId: h.devId, now: WallClock.nowMs(), liveSession: "")
                try await h.sendRaw(context.call { $0["appDeviceId"] = .string(String(repeating: "y", count: 2 << 20)) })
                // Still listening, and proof that the huge payload has been handled (one inbound
                // queue, in order): a valid call from someone else, sent after it, gets busy.
                try await h.send(h.call(from: "user-bob", session: "bob-1"))
                #expect(await h.wire.waitForSent(.busy).first?.targetId == "user-bob")
                // Nothing went to the huge payload's sender, and the answered call is untouched
                // (heartbeats of the live call may come and go meanwhile).
                let since = h.wire.outCalls().dropFirst(outBefore)
                #expect(!since.contains { $0.targetId == PayloadContext.sender }, "\(since.map(\.event))")
                #expect(since.allSatisfy { $0.event == .busy || $0.event == .heartbeat }, "\(since.map(\.event))")
                #expect(await h.device.status == before)
            }
        }

        func eventuallyReplies(_ h: CallHarness, after mark: Int) async -> [CallMessage] {
            _ = await eventually(timeout: .seconds(3)) { h.wire.outCalls().count > mark }
            return Array(h.wire.outCalls().dropFirst(mark))
        }
    }
}
