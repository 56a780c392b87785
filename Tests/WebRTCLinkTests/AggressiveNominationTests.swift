import CGstWebRTC
import Foundation
import Testing
import TestSupport
@testable import WebRTCLink

/// Issue 24 item 6 (docs/webrtc.md, "First frame, fifth pass"): the app's links nominate ICE pairs
/// aggressively. GStreamer 1.22 makes webrtcbin's libnice agent with regular nomination, a
/// construct-only property, so the shim writes it through the agent class's setter.
@Suite("Aggressive ICE nomination", .serialized)
struct AggressiveNominationTests {
    @Test("webrtcbin's agent nominates regularly unless told, aggressively once told")
    func theAgentTakesAggressiveNomination() throws {
        try GStreamerRuntime.start()
        var error: UnsafeMutablePointer<CChar>?
        let pipeline = try #require(cgw_pipeline_new_uncounted("webrtcbin name=w", &error))
        defer { cgw_element_unref(pipeline) }
        let webrtc = try #require(cgw_bin_get_child(pipeline, "w"))
        defer { cgw_element_unref(webrtc) }
        #expect(!cgw_webrtc_nominates_aggressively(webrtc), "GStreamer's own agent is regular")
        #expect(cgw_webrtc_nominate_aggressively(webrtc))
        #expect(cgw_webrtc_nominates_aggressively(webrtc))
    }

    @Test("an aggressive offerer and a regular answerer connect and carry video", .timeLimit(.minutes(8)))
    func anAggressiveOffererConnects() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let options = LinkOptions(localAddresses: ["127.0.0.1"], jitterBufferMs: 10, aggressiveNomination: true)
        let offer = try await harness.startOfferer(options: options)
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)))
        let frames = try await waitUntil(seconds: 20) { harness.framesReceivedByOfferer >= 10 }
        #expect(frames, "\(harness.diagnostics)")
    }
}
