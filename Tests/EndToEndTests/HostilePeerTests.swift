import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCWire
import Testing

/// Issue 10, hostile peers: a flood of refused messages, and offers that try to pile up links, take
/// over another user's link or address someone else.
extension EndToEnd {
    @Suite("Hostile peers (issue 10)")
    struct HostilePeers {
        /// An offer webrtcbin accepts (ICE credentials, a fingerprint) but that nobody will ever
        /// connect: no candidates, no peer behind it.
        static let deadEndSDP = [
            "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0", "a=recvonly", "a=rtcp-mux",
            "a=ice-ufrag:Hx9d", "a=ice-pwd:aK3lq0cD2pO8uWv1zT6mNy4b",
            "a=fingerprint:sha-256 " + (0..<32).map { _ in "AB" }.joined(separator: ":"), "a=setup:actpass",
            "a=rtpmap:96 H264/90000", "a=fmtp:96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
        ].joined(separator: "\r\n") + "\r\n"

        static func offer(_ h: CallHarness, from: String, to: String? = nil, session: String) -> Envelope {
            let id = h.profile.identity
            let auth = P2PAuth.compute(p2pPassword: id.p2pPassword, localKey: id.localKey, devId: id.devId)
            let header = SignalHeader(from: from, to: to ?? h.devId, sessionId: session)
            return SignalMessage(header: header, body: .offer(SignalOffer(sdp: deadEndSDP, auth: auth)))
                .envelope(t: WallClock.nowSeconds())
        }

        static func disconnects(_ events: EventRecorder<AppEvent>, reason: Int64) async -> [String] {
            await events.all { e -> String? in
                if case .signal(let s, _) = e, case .disconnect(let d) = s.body, d.closeReason == reason { s.header.sessionId } else { nil }
            }
        }

        @Test("a flood of refused messages: each counted by kind; a genuine call rings during and after it")
        func flood() async throws {
            try await withHarness(edit: { $0.behaviour.answerPolicy = .manual }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let context = PayloadContext(devId: h.devId, now: WallClock.nowMs(), liveSession: "")
                let kinds: [[UInt8]] = [
                    Array("not json at all".utf8),
                    context.call { $0["targetId"] = .string("another-device") },         // stop invalid_params
                    context.event("heartbeat", session: "no-such-session"),              // stop undefined_session
                    context.call { $0["appDeviceId"] = .string(String(repeating: "x", count: 65 * 1024)) },
                ]
                let rounds = 200
                let inTopic = h.profile.resolvedTopics.in
                for i in 0..<rounds {
                    for payload in kinds { try h.raw.publish(topic: inTopic, payload: payload, qos: 0, retain: false) }
                    if i == rounds / 2 {
                        // During the flood: a genuine call rings.
                        _ = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                    }
                }
                #expect(await aliceEvents.first(within: .seconds(10)) { $0.receivedEvent(.ring) } != nil, "no ring during the flood")
                try await alice.hangUp()
                #expect(await h.waitForPhase(.idle, within: .seconds(10)))
                // Every refusal is counted (QoS 0 may lose some under load: most must arrive).
                let deadline = ContinuousClock.now + .seconds(20)
                var totals = h.device.refusals.totals
                while (totals[.malformed] ?? 0) + (totals[.call] ?? 0) + (totals[.tooLarge] ?? 0) < rounds * 4 * 9 / 10,
                      ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                    totals = h.device.refusals.totals
                }
                #expect((totals[.malformed] ?? 0) >= rounds * 9 / 10, "\(totals)")
                #expect((totals[.tooLarge] ?? 0) >= rounds * 9 / 10, "\(totals)")
                #expect((totals[.call] ?? 0) >= 2 * rounds * 9 / 10, "\(totals)")
                // After the flood: a new call still rings.
                let mark = await aliceEvents.count
                _ = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first(after: mark, within: .seconds(5)) { $0.receivedEvent(.ring) } != nil)
            }
        }

        @Test("a 302 message addressed to another device is dropped and counted; no link, no reply")
        func headerTo() async throws {
            try await withHarness { h in
                let (mallory, malloryEvents) = try await h.app("user-mallory")
                let before = h.device.refusals.totals[.notForUs] ?? 0
                try await mallory.send(Self.offer(h, from: "user-mallory", to: "another-device", session: "live-x"), to: h.devId)
                let deadline = ContinuousClock.now + .seconds(5)
                while (h.device.refusals.totals[.notForUs] ?? 0) == before, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(h.device.refusals.totals[.notForUs] == before + 1)
                #expect(await h.device.mediaLinks.isEmpty)
                #expect(await malloryEvents.all { e -> Bool? in if case .signal = e { true } else { nil } }.isEmpty)
            }
        }

        @Test("links: at most the live-view limit of watchers (the link cap follows it); one that never connects is reaped after connectTimeout")
        func capAndReap() async throws {
            // The cap is the live-view limit plus the call's link, never below Device.maxLinks, and
            // a number from a profile or the command line cannot overflow it.
            #expect(Device.linkCap(liveViewLimit: 4) == Device.maxLinks)
            #expect(Device.linkCap(liveViewLimit: -3) == Device.maxLinks)
            #expect(Device.linkCap(liveViewLimit: 49) == 50)
            #expect(Device.linkCap(liveViewLimit: .max) == 1_000_001)
            // A limit above the old fixed cap of 8: that many watchers get links, the next is refused.
            let limit = Device.maxLinks + 1
            try await withHarness(edit: { $0.timers.connectTimeout = 3; $0.capabilities.liveViewLimit = limit }) { h in
                let (mallory, malloryEvents) = try await h.app("user-mallory")
                for i in 0...limit {
                    try await mallory.send(Self.offer(h, from: "user-mallory", session: "live-\(i)"), to: h.devId)
                }
                // The one past the limit is refused as unavailable (close_reason 2).
                _ = await malloryEvents.first(within: .seconds(10)) { e -> Bool? in
                    if case .signal(let s, _) = e, case .disconnect(let d) = s.body, d.closeReason == 2 { true } else { nil }
                }
                #expect(await Self.disconnects(malloryEvents, reason: 2) == ["live-\(limit)"])
                #expect(await h.device.mediaLinks.count == limit)
                // None connects: each is reaped, and the app is told (close_reason 0).
                let deadline = ContinuousClock.now + .seconds(15)
                while await !h.device.mediaLinks.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let left = await h.device.mediaLinks.keys.sorted()
                #expect(left.isEmpty, "links left: \(left)")
                _ = await malloryEvents.wait(for: limit, within: .seconds(3)) { e -> Bool? in
                    if case .signal(let s, _) = e, case .disconnect(let d) = s.body, d.closeReason == 0 { true } else { nil }
                }
                #expect(await Self.disconnects(malloryEvents, reason: 0).count == limit)
            }
        }

        @Test("an offer cannot take over another user's link, even with the right auth and live view on")
        func noTakeover() async throws {
            try await withHarness(edit: { $0.timers.connectTimeout = 30 }) { h in
                let (alice, _) = try await h.app("user-alice")
                let (mallory, malloryEvents) = try await h.app("user-mallory")
                try await alice.send(Self.offer(h, from: "user-alice", session: "alice-live"), to: h.devId)
                let deadline = ContinuousClock.now + .seconds(10)
                while await h.device.mediaLinks["alice-live"] == nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(await h.device.mediaLinks["alice-live"] != nil)
                try await mallory.send(Self.offer(h, from: "user-mallory", session: "alice-live"), to: h.devId)
                _ = await malloryEvents.first(within: .seconds(5)) { e -> Bool? in
                    if case .signal(let s, _) = e, case .disconnect = s.body { true } else { nil }
                }
                #expect(await Self.disconnects(malloryEvents, reason: 1) == ["alice-live"])
                #expect(await h.device.mediaLinks.keys.sorted() == ["alice-live"])
            }
        }
    }
}
