import AppSimulator
import CallEngine
import DeviceProfile
import Foundation
import IPCWire
import Testing
import TestSupport
import WebRTCLink

extension EndToEnd {
    /// Issue 22: the app builds its P2P link while the call rings (`prepareVideo`), so that the
    /// answer leaves only the offer/answer exchange and the connection; a call that ends unanswered
    /// closes the prepared link and stops its pipeline.
    @Suite("Prepared link (5)")
    struct PreparedLink {
        static func manualSmallVideo(_ p: inout DeviceProfile) {
            VideoCall.smallVideo(&p)
            p.behaviour.answerPolicy = .manual
        }

        @Test("a link prepared while the call rings is ready before the answer, sends its offer after it, and carries the video",
              .timeLimit(.minutes(8)))
        func preparedLinkIsUsed() async throws {
            try await withHarness(edit: Self.manualSmallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                let sid = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                try await alice.prepareVideo(sessionId: sid)
                #expect(await alice.preparedVideoCount == 1)
                // The pipeline plays and webrtcbin has made its offer while the device still rings.
                #expect(await VideoCall.until(.seconds(20)) { await alice.preparedVideoTimeline(sessionId: sid)?.offerMade != nil })
                let waiting = try #require(await alice.preparedVideoTimeline(sessionId: sid))
                #expect(waiting.offerSent == nil, "the offer went out before the answer")
                #expect(await h.device.status.phase == .ringingIncoming)

                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                #expect(try await alice.openVideo() == sid)
                #expect(await alice.preparedVideoCount == 0)
                #expect(await alice.preparedVideoTimeline(sessionId: sid) == nil)
                #expect(await VideoCall.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })

                let stats = try #require(await alice.videoStats(sessionId: sid))
                #expect(stats.stampErrors == 0, "\(stats.summary)")
                #expect(stats.answerToFirstFrameMs.map { $0 > 0 } == true, "\(stats.summary)")
                let steps = try #require(await alice.videoLinkTimeline(sessionId: sid))
                #expect(steps.preparedBeforeAnswer, "\(steps)")
                let offered = try #require(steps.offerMade), answered = try #require(steps.callAnswered)
                let sent = try #require(steps.offerSent), connected = try #require(steps.connected)
                #expect(offered <= answered && answered <= sent && sent <= connected, "\(steps)")
                // The device took the offer (an offer before its answer would get disconnect 1).
                #expect(await alice.disconnectReason(sessionId: sid) == nil)
                #expect(await h.device.status.session?.mediaLink == .up)
                try await alice.hangUp()
                #expect(await VideoCall.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
            }
        }

        @Test("a link prepared before the call goes out (its session id chosen first) is used at the answer and carries the video",
              .timeLimit(.minutes(8)))
        func linkPreparedBeforeTheCall() async throws {
            try await withHarness(edit: Self.manualSmallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                let sid = await alice.newCallSessionId()
                try await alice.prepareVideo(sessionId: sid, devId: h.devId)
                #expect(await VideoCall.until(.seconds(20)) { await alice.preparedVideoTimeline(sessionId: sid)?.offerMade != nil })
                #expect(try await alice.startCall(devId: h.devId, timeoutSeconds: 20, sessionId: sid) == sid)
                let ring = await events.first { $0.receivedEvent(.ring) }
                #expect(ring?.sessionId == sid, "the call went out with another session id: \(String(describing: ring))")
                #expect(await alice.preparedVideoTimeline(sessionId: sid)?.offerSent == nil, "the offer went out before the answer")

                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                #expect(try await alice.openVideo() == sid)
                #expect(await alice.preparedVideoCount == 0)
                #expect(await VideoCall.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })
                let steps = try #require(await alice.videoLinkTimeline(sessionId: sid))
                #expect(steps.preparedBeforeAnswer, "\(steps)")
                #expect(await alice.disconnectReason(sessionId: sid) == nil)
                #expect(await h.device.status.session?.mediaLink == .up)
                try await alice.hangUp()
                #expect(await VideoCall.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
            }
        }

        @Test("rejected while the prepared link waits: the link is closed and its pipeline stops",
              .timeLimit(.minutes(8)), .heavy(exclusive: true))
        func rejectTearsDown() async throws {
            try await withHarness(edit: Self.manualSmallVideo) { h in
                let baseline = GStreamerRuntime.runningPipelineCount
                let (alice, events) = try await h.app("user-alice")
                let sid = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                try await alice.prepareVideo(sessionId: sid)
                #expect(await VideoCall.until(.seconds(20)) { await alice.preparedVideoTimeline(sessionId: sid)?.offerMade != nil })
                #expect(GStreamerRuntime.runningPipelineCount == baseline + 1)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)

                try await h.device.reject()
                let ended = await events.first(within: .seconds(5)) { $0.endedRecord }
                #expect(ended?.sdkError == .rejected, "\(String(describing: ended))")
                #expect(await alice.preparedVideoCount == 0)
                #expect(await alice.preparedVideoTimeline(sessionId: sid) == nil)
                #expect(await VideoCall.until(.seconds(20)) { GStreamerRuntime.runningPipelineCount == baseline },
                        "\(GStreamerRuntime.runningPipelineCount) pipelines, \(baseline) before the call")
                // Nothing of it reaches the device: no offer, no link.
                #expect(await h.device.mediaLinks.isEmpty)
                #expect(await alice.videoLinkState(sessionId: sid) == nil)
            }
        }

        @Test("cancelled while the prepared link is still starting, and again once it is ready: each is closed, no pipeline left",
              .timeLimit(.minutes(8)), .heavy(exclusive: true))
        func cancelTearsDown() async throws {
            try await withHarness(edit: Self.manualSmallVideo) { h in
                let baseline = GStreamerRuntime.runningPipelineCount
                let (alice, events) = try await h.app("user-alice")
                // At once: the pipeline is still being built on its background thread.
                let first = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                try await alice.prepareVideo(sessionId: first)
                try await alice.cancel()
                #expect(await events.first(within: .seconds(5)) { $0.endedRecord?.sessionId == first ? true : nil } != nil)
                #expect(await alice.preparedVideoCount == 0)
                #expect(await VideoCall.until(.seconds(20)) { GStreamerRuntime.runningPipelineCount == baseline },
                        "\(GStreamerRuntime.runningPipelineCount) pipelines, \(baseline) before the call")

                // Once ready (offer made, candidates gathered).
                #expect(await VideoCall.until(.seconds(5)) { await h.device.status.phase == .idle })
                let second = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                try await alice.prepareVideo(sessionId: second)
                #expect(await VideoCall.until(.seconds(20)) { await alice.preparedVideoTimeline(sessionId: second)?.offerMade != nil })
                try await alice.cancel()
                #expect(await events.first(within: .seconds(5)) { $0.endedRecord?.sessionId == second ? true : nil } != nil)
                #expect(await alice.preparedVideoCount == 0)
                #expect(await VideoCall.until(.seconds(20)) { GStreamerRuntime.runningPipelineCount == baseline },
                        "\(GStreamerRuntime.runningPipelineCount) pipelines, \(baseline) before the call")
                #expect(await h.device.mediaLinks.isEmpty)
            }
        }

        @Test("openVideo asking for another link (no decoding) closes the prepared one and builds its own",
              .timeLimit(.minutes(8)))
        func otherShapeReplaces() async throws {
            try await withHarness(edit: Self.manualSmallVideo) { h in
                let (alice, events) = try await h.app("user-alice")
                let sid = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                try await alice.prepareVideo(sessionId: sid)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                #expect(try await alice.openVideo(decodes: false) == sid)
                #expect(await alice.preparedVideoCount == 0)
                #expect(await VideoCall.until(.seconds(20)) {
                    (await alice.videoLinkStatistics(sessionId: sid)?.stats.videoAccessUnitsReceived ?? 0) >= 10
                })
                #expect((await alice.videoStats(sessionId: sid)?.framesDecoded ?? -1) == 0)
                let steps = try #require(await alice.videoLinkTimeline(sessionId: sid))
                #expect(!steps.preparedBeforeAnswer, "\(steps)")
                try await alice.hangUp()
            }
        }
    }
}
