// One payloader per feed (issue 24 item 5; cgw_rtp_feed.c): a link sends its own copies of its
// feed's RTP packets (its SSRC, payload type, sequence numbers, timestamp offset).
import Synchronization
import Testing
@testable import WebRTCLink

@Suite(.serialized) struct FeedPacketsTests {
    /// Packets of a feed's packetizer, pushed into a link: the app decodes them, the link counts
    /// one frame per unit (not per packet), and a PLI from the app reaches the link's pushed pad
    /// (rtpfunnel routes it by the SSRC in the pad's caps) and asks for a key frame.
    @Test func aLinkSendsCopiesOfItsFeedsPacketsAndAPLIAsksForAKeyFrame() async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 90)
        let packetizer = try H264Packetizer()
        let requests = Atomic<Int>(0)
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer()
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits),
            keyFrameRequested: { requests.add(1, ordering: .relaxed) })
        let answerer = try #require(harness.answerer)
        let offerer = try #require(harness.offerer)
        var pushed = 0
        var packetsMade = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while harness.framesReceivedByOfferer < 30 && ContinuousClock.now < deadline {
            let unit = units[pushed % units.count]
            let packets = unit.bytes.withUnsafeBytes { packetizer.packetize($0, isKeyFrame: unit.isKey) }
            packetsMade += packets?.count ?? 0
            _ = unit.bytes.withUnsafeBytes { answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey, packets: packets) }
            pushed += 1
            try await Task.sleep(for: .milliseconds(33))
        }
        #expect(harness.framesReceivedByOfferer >= 30, "pushed \(pushed); \(harness.diagnostics)")
        #expect(harness.lastFrame?.width == 320)
        #expect(packetsMade > pushed, "a 320x240 key frame takes several packets")
        let sent = answerer.stats
        #expect(sent.videoFramesSent >= 30 && sent.videoFramesSent <= pushed, "sent \(sent.videoFramesSent) of \(pushed)")
        #expect(sent.videoKeyFramesSent >= 1)

        let before = requests.load(ordering: .relaxed)
        #expect(offerer.requestKeyFrame())
        let asked = try await waitUntil(seconds: 3) { requests.load(ordering: .relaxed) > before }
        #expect(asked, "the PLI did not reach the pushed pad")
    }

    /// A `resolution` switch moves a link to another feed, whose packetizer numbered and timed its
    /// packets on its own: the app sees one stream, its sequence numbers continuous (nothing
    /// missing, nothing late) and its timestamps advancing with the time, not jumping.
    @Test func switchingToAnotherFeedsPacketsKeepsSequenceAndTimestampsContinuous() async throws {
        let units = try await encodedAccessUnits(width: 320, height: 240, fps: 30, count: 30)
        let feeds = [try H264Packetizer(), try H264Packetizer()]
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer(configuration: OfferConfiguration(decodesVideo: false))
        try await harness.startAnswerer(
            offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 30), videoInput: .h264AccessUnits))
        let answerer = try #require(harness.answerer)
        #expect(try await waitUntil(seconds: 10) { answerer.state == .connected })
        var pushed = 0
        for feed in feeds {
            // Each feed made a second of packets of its own before (its numbers and times move on).
            for unit in units { _ = unit.bytes.withUnsafeBytes { feed.packetize($0, isKeyFrame: unit.isKey) } }
            for unit in units {
                let packets = unit.bytes.withUnsafeBytes { feed.packetize($0, isKeyFrame: unit.isKey) }
                _ = unit.bytes.withUnsafeBytes { answerer.pushH264AccessUnit($0, isKeyFrame: unit.isKey, packets: packets) }
                pushed += 1
                try await Task.sleep(for: .milliseconds(33))
            }
        }
        let total = pushed
        let counted = try await waitUntil(seconds: 5) { (harness.offerer?.stats.videoAccessUnitsReceived ?? 0) >= total }
        let received = try #require(harness.offerer?.stats)
        #expect(counted, "pushed \(pushed), counted \(received.videoAccessUnitsReceived)")
        #expect(received.videoPacketsMissing == 0, "\(received.videoPacketsMissing) missing in \(received.videoSequenceGaps) gaps")
        #expect(received.videoPacketsLate == 0)
        // 59 steps of about 33 ms (sleeping adds a little, a loaded machine more): 90 kHz.
        let span = received.videoTimestampSpan
        #expect(span >= 59 * 3_000 * 9 / 10 && span <= 59 * 3_000 * 3, "timestamp span \(span)")
    }
}
