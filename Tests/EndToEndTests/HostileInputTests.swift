import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCWire
import Testing

/// Messages that once crashed the device (issue 10): integer overflow on wire numbers, a trap in the
/// SDP reader. Each is published to a running device through a real broker, in every security
/// mode (sealed with the right key, so it reaches the decoder); afterwards the device still answers a
/// genuine call end to end.
enum HostilePayloads {
    /// The inner data of a call from the attacker, with `edit` applied.
    static func call(_ devId: String, session: String, _ edit: (inout [String: JSONValue]) -> Void) -> JSONValue {
        var inner: [String: JSONValue] = [
            "event": .string("call"), "curId": .string("user-mallory"), "targetId": .string(devId),
            "sessionId": .string(session), "timeout": .int(WallClock.nowMs() + 10_000), "callType": .int(1),
            "extra": .object(["bizType": .string("screen_ipc"), "channelType": .int(2)]),
        ]
        edit(&inner)
        return envelope(308, .object(["type": .string("rtc"), "data": .object(inner)]))
    }

    static func envelope(_ proto: Int64, _ data: JSONValue, t: JSONValue = .int(WallClock.nowSeconds())) -> JSONValue {
        .object(["protocol": .int(proto), "t": t, "data": data])
    }

    static func signal(_ devId: String, type: String, session: String, msg: [String: JSONValue]) -> JSONValue {
        envelope(302, .object([
            "header": .object(["type": .string(type), "from": .string("user-mallory"), "to": .string(devId),
                               "sessionid": .string(session)]),
            "msg": .object(msg.merging(["mode": .string("webrtc")]) { a, _ in a }),
        ]))
    }

    /// SDP whose fmtp lines trapped the reader (`kv[0]` of an empty split).
    static func sdp(fmtp: String) -> String {
        ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
         "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0", "a=recvonly", "a=rtcp-mux",
         "a=rtpmap:96 H264/90000", fmtp].joined(separator: "\r\n") + "\r\n"
    }

    /// Every hostile JSON body, by name.
    static func all(devId: String, auth: String) -> [(String, JSONValue)] {
        var out: [(String, JSONValue)] = []
        for (name, value) in [("Int64.max", JSONValue.int(.max)), ("Int64.min", .int(.min)), ("1e300", .double(1e300)),
                              ("-1e300", .double(-1e300)), ("0", .int(0)), ("-1", .int(-1))] {
            out.append(("308 call timeout \(name)", call(devId, session: "hostile-timeout") { $0["timeout"] = value }))
            out.append(("308 call callType \(name)", call(devId, session: "hostile-calltype") { $0["callType"] = value }))
            out.append(("308 call channelType \(name)", call(devId, session: "hostile-channel") {
                $0["extra"] = .object(["bizType": .string("screen_ipc"), "channelType": value])
            }))
            out.append(("308 hang_up timeout \(name)", call(devId, session: "hostile-hangup") {
                $0["event"] = .string("hang_up"); $0["timeout"] = value
            }))
            out.append(("308 callEvent \(name)", call(devId, session: "hostile-event") {
                $0["event"] = nil; $0["callEvent"] = value
            }))
            out.append(("envelope t \(name)", envelope(309, .object([
                "type": .string("ability_query"), "curId": .string("user-mallory"), "reqId": .string("r1"),
            ]), t: value)))
            out.append(("302 candidate sdpMLineIndex \(name)", signal(devId, type: "candidate", session: "hostile-offer",
                msg: ["candidate": .string("a=candidate:1 1 udp 2122260223 127.0.0.1 9 typ host\r\n"), "sdpMLineIndex": value])))
            out.append(("302 offer stream_type \(name)", signal(devId, type: "offer", session: "hostile-offer-st",
                msg: ["sdp": .string(sdp(fmtp: "a=fmtp:96 packetization-mode=1")), "auth": .string(auth), "stream_type": value])))
            out.append(("302 disconnect close_reason \(name)", signal(devId, type: "disconnect", session: "hostile-offer",
                msg: ["close_reason": value])))
        }
        for (i, fmtp) in ["a=fmtp:96 =", "a=fmtp:96 ;=;", "a=fmtp:96 ==;;=", "a=fmtp:", "a=rtpmap:96 /"].enumerated() {
            out.append(("302 offer with SDP line '\(fmtp)'", signal(devId, type: "offer", session: "hostile-sdp-\(i)",
                msg: ["sdp": .string(sdp(fmtp: fmtp)), "auth": .string(auth), "stream_type": .int(0)])))
        }
        for candidate in ["", "a=", "candidate:", "candidate:x", "a=candidate:1 1 udp 1 999.999.999.999 99999999 typ host\r\n",
                          "candidate:\u{0}\u{1}\r\n", String(repeating: "candidate:1 ", count: 2000)] {
            out.append(("302 candidate '\(candidate.prefix(20))'", signal(devId, type: "candidate", session: "hostile-sdp-0",
                msg: ["candidate": .string(candidate)])))
        }
        return out
    }

    /// Raw payloads that never decode (any security mode).
    static let garbage: [[UInt8]] = [
        [], [0], Array("2.2".utf8), Array("2.3".utf8), Array("2.2".utf8) + [UInt8](repeating: 0xFF, count: 12),
        Array("2.3".utf8) + [UInt8](repeating: 0, count: 40), Array("{\"protocol\":308".utf8),
        Array(String(repeating: "[", count: 10_000).utf8), Array(String(repeating: "{\"a\":", count: 5_000).utf8),
    ]
}

extension EndToEnd {
    @Suite("Hostile input: the device survives and still takes a call (issue 10)")
    struct HostileInput {
        @Test("every hostile message, then a genuine call is answered", arguments: SecurityMode.allCases)
        func survivesThenAnswers(_ mode: SecurityMode) async throws {
            try await withHarness(edit: {
                $0.security = mode
                $0.behaviour.answerPolicy = .manual
            }) { h in
                let id = h.profile.identity
                let auth = P2PAuth.compute(p2pPassword: id.p2pPassword, localKey: id.localKey, devId: id.devId)
                let hostile = HostilePayloads.all(devId: h.devId, auth: auth)
                for (_, json) in hostile { try await h.sendRaw(h.seal(json.serialized())) }
                for payload in HostilePayloads.garbage { try await h.sendRaw(payload) }
                // The one valid call among them (timeout Int64.max, capped at 24 h) rings; its deadline
                // is capped, and the caller cancels it. Every other one was refused or got busy.
                #expect(await h.waitForPhase(.ringingIncoming))
                let session = await h.device.status.session
                #expect(session?.sessionId == "hostile-timeout")
                #expect((session?.deadline ?? .max) <= WallClock.nowMs() + maxCallDeadlineAheadMs)
                try await h.send(CallMessage(event: .cancel, curId: "user-mallory", targetId: h.devId,
                                             sessionId: "hostile-timeout"))
                let settled = await h.waitForPhase(.idle)
                let phase = await h.device.status.phase
                #expect(settled, "phase: \(phase)")
                try await h.device.setAnswerPolicy(.answerAfter(ms: 0))

                // A genuine call, end to end.
                let (alice, aliceEvents) = try await h.app("user-alice")
                _ = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil, "no answer after the hostile input")
                try await alice.hangUp()
                #expect(await h.waitForPhase(.idle))
                #expect(await h.device.status.callsEnded >= 1)
            }
        }
    }
}
