import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
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
              .timeLimit(.minutes(8)))
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
                // The first frame's capture (its stamp) came before its decode, and the link's
                // steps as the app saw them are in order: offer, the device's answer, connected.
                let captured = try #require(stats.firstFrameCapturedAt)
                let decoded = try #require(stats.firstFrameAt)
                #expect(captured <= decoded.addingTimeInterval(0.001), "captured \(captured), decoded \(decoded)")
                let steps = try #require(await alice.videoLinkTimeline(sessionId: sid))
                let opened = try #require(steps.opened), offered = try #require(steps.offerMade)
                let answered = try #require(steps.answerReceived), connected = try #require(steps.connected)
                #expect(opened <= offered && offered <= answered && answered <= connected, "\(steps)")
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

        @Test("two-way: the device counts the app's frames and keeps the latest as JPEG", .timeLimit(.minutes(8)))
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
              .timeLimit(.minutes(8)))
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
              .timeLimit(.minutes(8)))
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

        @Test("resolution: main -> sub -> main on the same link, each switch within 1 s and starting at a key frame",
              .timeLimit(.minutes(8)))
        func resolutionSwitch() async throws {
            try await withHarness(edit: {
                Self.smallVideo(&$0)
                $0.capabilities.video?.sub = DeviceProfile.StreamFormat(width: 320, height: 180, fps: 15)
            }) { h in
                let (alice, events) = try await h.app("user-alice")
                try await alice.startCall(devId: h.devId, timeoutSeconds: 10)
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                let sid = try await alice.openVideo(streamType: .main)
                #expect(await Self.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })
                #expect(await alice.videoStats(sessionId: sid)?.width == 640)

                var switchTimes: [Double] = []
                for (index, (stream, width, height)) in [(StreamType.sub, 320, 180), (.main, 640, 360)].enumerated() {
                    let keysBefore = try #require(await h.device.mediaStats(sessionId: sid)).videoKeyFramesSent
                    let sentAt = Date()
                    try await alice.switchStream(sessionId: sid, devId: h.devId, to: stream)
                    #expect(await Self.until(.seconds(5)) {
                        (await alice.videoStats(sessionId: sid)?.sizeChanges.count ?? 0) > index
                    })
                    let stats = try #require(await alice.videoStats(sessionId: sid))
                    let change = try #require(stats.sizeChanges.dropFirst(index).first)
                    #expect(change.width == width && change.height == height, "\(stats.sizeChanges)")
                    // The first frame at the new size decoded whole: its stamp reads.
                    #expect(change.stampRead)
                    let took = change.at.timeIntervalSince(sentAt)
                    switchTimes.append(took * 1000)
                    #expect(took < 1.0, "switch to \(width)x\(height) took \(took) s")
                    // The device sent a key frame for the new stream, on the same link.
                    let after = try #require(await h.device.mediaStats(sessionId: sid))
                    #expect(after.videoKeyFramesSent > keysBefore)
                    #expect(await h.device.mediaLinks.count == 1)
                    // Frames keep coming at the new size.
                    let decoded = stats.framesDecoded
                    #expect(await Self.until(.seconds(5)) {
                        let s = await alice.videoStats(sessionId: sid)
                        return (s?.framesDecoded ?? 0) >= decoded + 10 && s?.width == width
                    })
                }
                let final = try #require(await alice.videoStats(sessionId: sid))
                #expect(final.stampErrors == 0, "\(final.summary)")
                print("resolution switch times (ms): \(switchTimes.map { Int($0) })")

                // A value the profile has no stream for, and a stranger's switch: dropped, the
                // link goes on at its size.
                let (mallory, _) = try await h.app("user-mallory")
                try await mallory.switchStream(sessionId: sid, devId: h.devId, to: .sub)
                #expect(await h.deviceEvents.first(within: .seconds(5)) { e -> Bool? in
                    if case .refused(let why) = e, why.contains("user-mallory") { true } else { nil }
                } == true)
                let bad = SignalMessage(header: SignalHeader(from: "user-alice", to: h.devId, sessionId: sid),
                                        body: .resolution(SignalResolution(value: 7)))
                try await alice.send(bad.envelope(t: WallClock.nowSeconds()), to: h.devId)
                let noLink = SignalMessage(header: SignalHeader(from: "user-alice", to: h.devId, sessionId: "no-link"),
                                           body: .resolution(SignalResolution(streamType: .sub)))
                try await alice.send(noLink.envelope(t: WallClock.nowSeconds()), to: h.devId)
                // Alice's two arrive in order: once the second is refused, the first was handled.
                #expect(await h.deviceEvents.first(within: .seconds(5)) { e -> Bool? in
                    if case .refused(let why) = e, why.contains("'no-link'") { true } else { nil }
                } == true)
                let refusals = await h.deviceEvents.all { e -> String? in if case .refused(let why) = e { why } else { nil } }
                #expect(refusals.contains { $0.contains("value 7") }, "\(refusals)")
                let decoded = try #require(await alice.videoStats(sessionId: sid)).framesDecoded
                #expect(await Self.until(.seconds(5)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= decoded + 15 })
                #expect(await alice.videoStats(sessionId: sid)?.sizeChanges.count == 2)
                try await alice.hangUp()
            }
        }
    }
}
