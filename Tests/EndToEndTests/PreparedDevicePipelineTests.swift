import AppSimulator
import CallEngine
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport
import WebRTCLink

extension EndToEnd {
    /// Issue 24 item 6: while a call rings, the device builds the pipeline its answer will need
    /// (webrtcbin, the send branches); the call's offer takes it. A call that ends without an offer
    /// (rejected, cancelled, timed out) tears it down: none is left waiting, no pipeline leaks.
    @Suite("Prepared device pipeline (2)")
    struct PreparedDevicePipeline {
        @Test("the call's offer takes the pipeline built while it rang, and the video flows", .timeLimit(.minutes(8)), .heavy(exclusive: true))
        func offerTakesThePreparedPipeline() async throws {
            let feeds = VideoFeeds(preparesWhileRinging: true)
            try await withHarness(edit: PreparedLink.manualSmallVideo, feeds: feeds) { h in
                let (alice, events) = try await h.app("user-alice")
                let sid = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                #expect(await events.first { $0.receivedEvent(.ring) } != nil)
                #expect(await VideoCall.until(.seconds(20)) { feeds.preparedPipelines.built == 1 })
                #expect(feeds.preparedPipelines.waiting == 1)
                // Nothing of it went on the wire: the device has no link before the offer.
                #expect(await h.device.mediaLinks.isEmpty)

                try await h.device.answer()
                #expect(await events.first { $0.receivedEvent(.answer) } != nil)
                #expect(try await alice.openVideo() == sid)
                #expect(await VideoCall.until(.seconds(20)) { (await alice.videoStats(sessionId: sid)?.framesDecoded ?? 0) >= 10 })
                let stats = try #require(await alice.videoStats(sessionId: sid))
                #expect(stats.stampErrors == 0, "\(stats.summary)")
                #expect(feeds.preparedPipelines.taken == 1)
                #expect(feeds.preparedPipelines.waiting == 0)
                #expect(await h.device.status.session?.mediaLink == .up)
                try await alice.hangUp()
                #expect(await VideoCall.until(.seconds(5)) { await h.device.mediaLinks.isEmpty })
            }
        }

        @Test("rung then rejected, cancelled or timed out 9 times: every prepared pipeline is torn down",
              .timeLimit(.minutes(8)), .heavy(exclusive: true))
        func unansweredCallsLeaveNothing() async throws {
            let feeds = VideoFeeds(preparesWhileRinging: true)
            try await withHarness(edit: PreparedLink.manualSmallVideo, feeds: feeds) { h in
                let (alice, events) = try await h.app("user-alice")
                // Warm: the feed's encoder starts with the first ring and stays while rings hold it.
                let warm = try await alice.startCall(devId: h.devId, timeoutSeconds: 20)
                #expect(await VideoCall.until(.seconds(20)) { feeds.preparedPipelines.built == 1 })
                let status = await h.device.status
                #expect(status.phase == .ringingIncoming, "\(status)")
                try await h.device.reject()
                #expect(await events.first(within: .seconds(5)) { $0.endedRecord?.sessionId == warm ? true : nil } != nil)
                #expect(await VideoCall.until(.seconds(5)) { feeds.preparedPipelines.waiting == 0 })
                let baseline = GStreamerRuntime.runningPipelineCount

                for round in 0..<9 {
                    #expect(await VideoCall.until(.seconds(5)) { await h.device.status.phase == .idle })
                    let ending = round % 3
                    let builtBefore = feeds.preparedPipelines.built
                    // A ring timeout of 1 s for the third kind; the others end by hand.
                    let sid = try await alice.startCall(devId: h.devId, timeoutSeconds: ending == 2 ? 1 : 20)
                    // The device rings this call (not an event of an earlier one).
                    #expect(await VideoCall.until(.seconds(5)) { await h.device.status.phase == .ringingIncoming }, "round \(round)")
                    if round < 6, ending != 2 {
                        // Ends once the pipeline is ready (the first rounds) or while it may still be built.
                        #expect(await VideoCall.until(.seconds(20)) { feeds.preparedPipelines.built == builtBefore + 1 })
                    }
                    switch ending {
                    case 0: try await h.device.reject()
                    case 1: try await alice.cancel()
                    default: break  // times out
                    }
                    #expect(await events.first(within: .seconds(10)) { $0.endedRecord?.sessionId == sid ? true : nil } != nil,
                            "round \(round): the call did not end")
                    #expect(await VideoCall.until(.seconds(5)) { feeds.preparedPipelines.waiting == 0 }, "round \(round)")
                }
                let counts = feeds.preparedPipelines
                #expect(counts.taken == 0)
                #expect(counts.discarded >= counts.built, "\(counts)")
                #expect(await VideoCall.until(.seconds(20)) { GStreamerRuntime.runningPipelineCount <= baseline },
                        "\(GStreamerRuntime.runningPipelineCount) pipelines, \(baseline) before the rings")
                #expect(await h.device.mediaLinks.isEmpty)
            }
        }
    }
}
