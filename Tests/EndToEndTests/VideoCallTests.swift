import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import IPCWire
import Testing
import WebRTCLink

extension EndToEnd {
    /// PROTOCOL.md 4 with real media: once a call is answered the app offers, the device answers,
    /// and the device's stamped test pattern reaches the app through webrtcbin on loopback.
    @Suite("P2P video (4, 6)")
    struct VideoCall {
        /// A 640x360@30 main stream keeps the suite quick on two cores.
        static func smallVideo(_ p: inout DeviceProfile) {
            p.capabilities.video?.main = DeviceProfile.StreamFormat(width: 640, height: 360, fps: 30)
            p.capabilities.liveView = false
            p.behaviour.answerPolicy = .answer(afterSeconds: 0)
        }

        /// Waits until `condition` holds, polling every 50 ms.
        static func until(_ timeout: Duration, _ condition: () async -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if await condition() { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return await condition()
        }

        @Test("call -> answer -> WebRTC -> 60+ frames, every stamp read -> hang up -> link gone on both sides",
              .timeLimit(.minutes(1)))
        func videoFlows() async throws {
            try await withHarness(edit: Self.smallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo()

                #expect(await Self.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 60 })
                let stats = try #require(await alice.videoStats(sessionId: sid))
                #expect(stats.framesDecoded >= 60)
                #expect(stats.width == 640 && stats.height == 360)
                #expect(stats.stampErrors == 0, "\(stats.summary)")
                #expect(stats.stampsRead == stats.framesDecoded)
                #expect(stats.answerToFirstFrameMs != nil)
                // Capture-to-decode on one clock: positive, and far below a second on loopback.
                let p50 = try #require(stats.latencyPercentile(50))
                #expect(p50 > 0 && p50 < 1000, "\(stats.summary)")
                // The device's side: the link is up and counted frames went out.
                let deviceStats = try #require(await h.device.mediaStats(sessionId: sid))
                #expect(deviceStats.videoFramesSent >= 60)
                #expect(await h.device.status.session?.mediaLink == .up)

                try await alice.hangUp()
                #expect(await Self.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
                #expect(await alice.videoLinkState(sessionId: sid) == nil)
            }
        }

        @Test("two-way: the device counts the app's frames and keeps the latest as JPEG", .timeLimit(.minutes(1)))
        func twoWay() async throws {
            try await withHarness(edit: Self.smallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(sendVideo: VideoFormat(width: 320, height: 240, fps: 15))
                #expect(await Self.until(.seconds(20)) {
                    (await h.device.mediaStats(sessionId: sid)?.videoFramesReceived ?? 0) >= 30
                })
                let jpeg = try #require(try await h.device.receivedFrameJPEG(sessionId: sid))
                #expect(jpeg.prefix(2) == [0xFF, 0xD8])
                try await alice.hangUp()
            }
        }

        @Test("nobody else gets video: wrong auth, a user who did not answer, a never-answered and a rung-but-unanswered session",
              .timeLimit(.minutes(1)))
        func refusedOffersGetNoMedia() async throws {
            try await withHarness(edit: {
                Self.smallVideo(&$0)
                $0.behaviour.answerPolicy = .manual
            }) { h in
                let (alice, aliceEvents) = try await h.app("user-alice")
                let (bob, _) = try await h.app("user-bob")
                // Rung but unanswered: alice's call rings, alice offers anyway.
                let ringing = try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await aliceEvents.first { $0.receivedEvent(.ring) } != nil)
                try await alice.openVideo(sessionId: ringing, devId: h.devId)
                // Never answered: a session the device never heard of.
                try await bob.openVideo(sessionId: "no-such-session", devId: h.devId)
                #expect(await Self.until(.seconds(5)) {
                    let a = await alice.disconnectReason(sessionId: ringing)
                    let b = await bob.disconnectReason(sessionId: "no-such-session")
                    return a == 1 && b == 1
                })

                // Now answered by alice: bob (who did not answer) and a wrong auth are refused.
                try await h.device.answer()
                #expect(await aliceEvents.first { $0.receivedEvent(.answer) } != nil)
                try await bob.openVideo(sessionId: ringing, devId: h.devId)
                let wrongAuthSession = ringing
                try await alice.openVideo(sessionId: wrongAuthSession, devId: h.devId, auth: "d3Jvbmc=")
                #expect(await Self.until(.seconds(5)) {
                    let b = await bob.disconnectReason(sessionId: ringing)
                    let a = await alice.disconnectReason(sessionId: wrongAuthSession)
                    return a == 1 && b == 1
                })
                try? await Task.sleep(for: .seconds(1))
                #expect(await h.device.mediaLinks.isEmpty, "the device opened a link for a refused offer")
                #expect((await alice.videoStats(sessionId: ringing)?.framesDecoded ?? 0) == 0)
                #expect((await bob.videoStats(sessionId: ringing)?.framesDecoded ?? 0) == 0)
                // The call goes on unchanged.
                #expect(await h.device.status.phase == .answered)
            }
        }

        @Test("stream_type 1 gets the sub stream's size; a second offer replaces the link; the app's disconnect tears it down",
              .timeLimit(.minutes(1)))
        func subStreamReplaceAndDisconnect() async throws {
            try await withHarness(edit: {
                Self.smallVideo(&$0)
                $0.capabilities.video?.sub = DeviceProfile.StreamFormat(width: 320, height: 180, fps: 15)
            }) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(streamType: .sub)
                #expect(await Self.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })
                let sub = try #require(await alice.videoStats(sessionId: sid))
                #expect(sub.width == 320 && sub.height == 180, "\(sub.summary)")
                #expect(sub.stampErrors == 0)
                let status = await h.device.status
                #expect(status.media.openLinks == 1 && status.media.framesSent > 0 && status.media.fps > 0)

                // A second offer for the same session (the app reconnecting) replaces the link.
                try await alice.openVideo(streamType: .main)
                #expect(await Self.until(.seconds(20)) {
                    let s = await alice.videoStats(sessionId: sid)
                    return (s?.framesDecoded ?? 0) >= 10 && s?.width == 640
                })
                #expect(await h.device.mediaLinks.count == 1)

                // The app's disconnect tears the device's link down; the call itself goes on (for now).
                let bye = SignalMessage(header: SignalHeader(from: "user-alice", to: h.devId, sessionId: sid),
                                        body: .disconnect(SignalDisconnect(closeReason: 0)))
                try await alice.send(bye.envelope(t: WallClock.nowSeconds()), to: h.devId)
                #expect(await Self.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
                #expect(await h.device.status.phase == .answered)
                #expect(await h.device.status.media.openLinks == 0)
                try await alice.hangUp()
            }
        }
    }
}
