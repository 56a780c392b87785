import AppSimulator
import CallEngine
import CallRuntime
import Emulator
import IPCWire
import Testing

extension EndToEnd {
    /// PROTOCOL.md 4, "Who may open a link": the right `auth` AND (the answered session from the
    /// user who answered it, or live view). Anything else: `disconnect` close_reason 1, and the
    /// call goes on unchanged. (Only the signalling side: this checks who is refused.)
    @Suite("P2P offer authorisation (4)")
    struct OfferAuthorisation {
        /// An offer from `from` for `session`, with the right auth unless `auth` is given.
        static func offer(_ h: CallHarness, from: String, session: String, auth: String? = nil) -> Envelope {
            let id = h.profile.identity
            let rightAuth = P2PAuth.compute(p2pPassword: id.p2pPassword, localKey: id.localKey, devId: id.devId)
            let header = SignalHeader(from: from, to: h.devId, sessionId: session, motoId: "moto-1")
            let body = SignalOffer(sdp: "v=0\r\n", auth: auth ?? rightAuth)
            return SignalMessage(header: header, body: .offer(body)).envelope(t: WallClock.nowSeconds())
        }

        /// The `disconnect`s with close_reason 1 (unauthorised) the device sent to `user`, as that app
        /// received them. (An authorised offer with this placeholder SDP may get another close
        /// reason: the media link cannot be built from it; that is not a refusal of who sent it.)
        static func disconnects(_ events: EventRecorder<AppEvent>, within: Duration) async -> [SignalMessage] {
            _ = await events.first(within: within) { e -> Bool? in
                if case .signal(let s, _) = e, Self.isUnauthorised(s) { true } else { nil }
            }
            return await events.all { e -> SignalMessage? in
                if case .signal(let s, _) = e, Self.isUnauthorised(s) { s } else { nil }
            }
        }

        static func isUnauthorised(_ s: SignalMessage) -> Bool {
            if case .disconnect(let d) = s.body { d.closeReason == SignalDisconnect.unauthorised } else { false }
        }

        @Test("live view off: only the answering user, with the right auth, for the answered session")
        func answeredCallOnly() async throws {
            try await withHarness(edit: {
                $0.capabilities.liveView = false
                $0.behaviour.answerPolicy = .answer(afterSeconds: 0)
            }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let (bob, bobEvents) = try await h.app("user-bob")
                let sessionId = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil)
                let before = await h.device.status

                // Allowed: alice, right auth, her answered session.
                try await alice.send(Self.offer(h, from: "user-alice", session: sessionId), to: h.devId)
                #expect(await Self.disconnects(aliceEvents, within: .milliseconds(300)).isEmpty)

                // Wrong auth, even from alice for her own session.
                try await alice.send(Self.offer(h, from: "user-alice", session: sessionId, auth: "AAAA"), to: h.devId)
                let refused = await Self.disconnects(aliceEvents, within: .seconds(3))
                let disconnect = try #require(refused.first)
                #expect(disconnect.header.sessionId == sessionId && disconnect.header.from == h.devId)
                #expect(disconnect.header.motoId == "moto-1")
                #expect(disconnect.body == .disconnect(SignalDisconnect(closeReason: 1)))

                // Right auth, but bob did not answer this call; and alice for another session.
                try await bob.send(Self.offer(h, from: "user-bob", session: sessionId), to: h.devId)
                #expect(await Self.disconnects(bobEvents, within: .seconds(3)).count == 1)
                try await alice.send(Self.offer(h, from: "user-alice", session: "some-other-session"), to: h.devId)
                _ = await aliceEvents.wait(for: 2, within: .seconds(3)) { e -> Bool? in
                    if case .signal(let s, _) = e, Self.isUnauthorised(s) { true } else { nil }
                }
                #expect(await Self.disconnects(aliceEvents, within: .zero).count == 2)

                #expect(await h.device.status == before, "the call changed")
                #expect(await alice.phase == .answered)
            }
        }

        @Test("live view on: the right auth is enough without a call; a wrong one is refused")
        func liveView() async throws {
            try await withHarness(edit: { $0.capabilities.liveView = true }) { h in
                let (app, events) = try await h.app("user-alice")
                try await app.send(Self.offer(h, from: "user-alice", session: "live-1"), to: h.devId)
                #expect(await Self.disconnects(events, within: .milliseconds(300)).isEmpty)
                try await app.send(Self.offer(h, from: "user-alice", session: "live-2", auth: "AAAA"), to: h.devId)
                let refused = await Self.disconnects(events, within: .seconds(3))
                #expect(refused.map(\.header.sessionId) == ["live-2"])
                #expect(await h.device.status.phase == .idle)
            }
        }
    }
}
