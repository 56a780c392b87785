import Foundation
import Testing
import TestSupport
import CGstWebRTC
@testable import WebRTCLink

/// The app's counted receiver (`OfferConfiguration.decodesVideo` false, `bench media`'s streams
/// beyond the decoded sample): H.264 access units counted at the RTP level, no jitter buffer, no
/// depayloader, no queue; the RTP sequence numbers checked; audio counted at the pad and dropped.
@Suite struct RTPAccessUnitParsingTests {
    /// An RTP header (version 2, payload type 96) with `csrcs` CSRCs and an optional one-word
    /// extension, then `payload`.
    static func packet(_ payload: [UInt8], marker: Bool, csrcs: Int = 0, extensionWords: Int? = nil,
                       padding: Int = 0) -> [UInt8] {
        var first: UInt8 = 0x80 | UInt8(csrcs)
        if extensionWords != nil { first |= 0x10 }
        if padding > 0 { first |= 0x20 }
        var bytes: [UInt8] = [first, (marker ? 0x80 : 0) | 96, 0, 1, 0, 0, 0, 9, 0xca, 0xfe, 0xba, 0xbe]
        bytes += Array(repeating: 0x11, count: 4 * csrcs)
        if let words = extensionWords {
            bytes += [0xbe, 0xde, 0, UInt8(words)] + Array(repeating: 0x05, count: 4 * words)
        }
        bytes += payload
        if padding > 0 { bytes += Array(repeating: 0, count: padding - 1) + [UInt8(padding)] }
        return bytes
    }

    static func kind(_ packet: [UInt8]) -> (Int32, Bool) {
        var idr = false
        let kind = packet.withUnsafeBufferPointer { cgw_rtp_h264_packet_kind($0.baseAddress, $0.count, &idr) }
        return (kind, idr)
    }

    @Test func theMarkerBitEndsAnAccessUnit() {
        #expect(Self.kind(Self.packet([0x41, 0x9a, 0x00], marker: true)) == (1, false))  // a P slice, last packet
        #expect(Self.kind(Self.packet([0x41, 0x9a, 0x00], marker: false)) == (0, false))
    }

    @Test func anIDRSliceMakesAKeyFrameWhereverItIs() {
        #expect(Self.kind(Self.packet([0x65, 0x88, 0x80], marker: true)) == (1, true))  // single NAL, type 5
        // FU-A (28): the start fragment of an IDR counts; a middle or end fragment does not.
        #expect(Self.kind(Self.packet([0x7c, 0x85, 0x00], marker: false)) == (0, true))
        #expect(Self.kind(Self.packet([0x7c, 0x05, 0x00], marker: false)) == (0, false))
        #expect(Self.kind(Self.packet([0x7c, 0x45, 0x00], marker: true)) == (1, false))
        #expect(Self.kind(Self.packet([0x7c, 0x81, 0x00], marker: false)) == (0, false))  // a P slice's start
        // STAP-A (24) of SPS, PPS and an IDR slice; and one of SPS and PPS only.
        let stap: [UInt8] = [0x78, 0, 2, 0x67, 0x42, 0, 2, 0x68, 0xce, 0, 2, 0x65, 0x88]
        #expect(Self.kind(Self.packet(stap, marker: true)) == (1, true))
        #expect(Self.kind(Self.packet(Array(stap.prefix(9)), marker: false)) == (0, false))
    }

    @Test func thePayloadIsFoundAfterCSRCsAndAnExtension() {
        // Without skipping them, the first CSRC byte (0x11: a P slice) or the extension would be read.
        #expect(Self.kind(Self.packet([0x65, 0x88], marker: true, csrcs: 2)) == (1, true))
        #expect(Self.kind(Self.packet([0x65, 0x88], marker: false, extensionWords: 2)) == (0, true))
        #expect(Self.kind(Self.packet([0x65, 0x88], marker: true, csrcs: 1, extensionWords: 1, padding: 4)) == (1, true))
    }

    static func steps(_ sequences: [UInt16]) -> (missing: UInt32, late: UInt32) {
        var have = false
        var next: UInt16 = 0
        var missing: UInt32 = 0, late: UInt32 = 0
        for sequence in sequences { cgw_rtp_sequence_step(&have, &next, sequence, &missing, &late) }
        return (missing, late)
    }

    @Test func theSequenceCheckCountsMissingAndLatePackets() {
        #expect(Self.steps([7, 8, 9, 10]) == (0, 0))
        #expect(Self.steps([65534, 65535, 0, 1]) == (0, 0))  // the wrap is no gap
        #expect(Self.steps([10, 11, 14, 15]) == (2, 0))  // 12 and 13 lost
        #expect(Self.steps([65535, 2]) == (2, 0))  // lost across the wrap: 0 and 1
        #expect(Self.steps([10, 12, 11, 13]) == (1, 1))  // reordered: 11 first counted missing, then late
        #expect(Self.steps([10, 11, 11, 12]) == (0, 1))  // repeated
        // A gap can never be more than half the space: what is that far behind is late.
        #expect(Self.steps([40_000, 40_000 &- 30_000]) == (0, 1))
    }

    @Test func whatIsNotAnRTPPacketWithAPayloadIsRefused() {
        #expect(Self.kind([0x80, 0xe0, 0, 1]).0 == -1)  // shorter than a header
        var versionOne = Self.packet([0x65], marker: true)
        versionOne[0] = 0x40
        #expect(Self.kind(versionOne).0 == -1)
        #expect(Self.kind(Self.packet([], marker: true)).0 == -1)  // no payload
        #expect(Self.kind(Self.packet([0x65], marker: true, csrcs: 3)).0 == 1)
        var truncated = Self.packet([0x65, 0x88], marker: true, extensionWords: 1)
        truncated[15] = 40  // an extension longer than the packet
        #expect(Self.kind(truncated).0 == -1)
        var overPadded = Self.packet([0x65, 0x88], marker: true, padding: 2)
        overPadded[overPadded.count - 1] = 200
        #expect(Self.kind(overPadded).0 == -1)
    }
}

@Suite(.serialized, .heavy)
struct CountedReceiverTests {
    /// One access unit counted per frame the device sends, key frames among them, and the audio
    /// counted at the pad but not decoded.
    @Test func accessUnitsAreCountedOncePerFrameSent() async throws {
        let harness = LinkHarness()
        defer { harness.closeAll() }
        let offer = try await harness.startOfferer(configuration: OfferConfiguration(decodesVideo: false))
        try await harness.startAnswerer(offer: offer, media: SendMedia(video: VideoFormat(width: 320, height: 240, fps: 15)))
        let flowing = try await waitUntil(seconds: 20) { (harness.offerer?.stats.videoAccessUnitsReceived ?? 0) >= 15 }
        #expect(flowing, "\(harness.diagnostics)")

        // Thirty more frames sent: as many access units counted (the count read before the frames
        // sent, so that it cannot be ahead of them when right; counting packets would be).
        let sent0 = try #require(harness.answerer?.stats.videoFramesSent)
        let counted0 = try #require(harness.offerer?.stats.videoAccessUnitsReceived)
        let more = try await waitUntil(seconds: 10) { (harness.answerer?.stats.videoFramesSent ?? 0) >= sent0 + 30 }
        #expect(more, "\(harness.diagnostics)")
        let target = (harness.answerer?.stats.videoFramesSent ?? 0) - sent0
        let caughtUp = try await waitUntil(seconds: 5) {
            (harness.offerer?.stats.videoAccessUnitsReceived ?? 0) - counted0 >= target - 2
        }
        let received = try #require(harness.offerer?.stats)
        let sent = try #require(harness.answerer?.stats)
        let countedFrames = received.videoAccessUnitsReceived - counted0
        let sentFrames = sent.videoFramesSent - sent0
        #expect(caughtUp, "sent \(target), counted \(countedFrames)")
        #expect(countedFrames <= sentFrames + 1, "sent \(sentFrames), counted \(countedFrames)")
        // Packets are not access units: a 320x240 key frame takes several.
        #expect(received.videoPacketsReceived > received.videoAccessUnitsReceived)
        #expect(received.videoKeyFramesReceived >= 1)
        #expect(received.videoKeyFramesReceived <= sent.videoKeyFramesSent)
        #expect(received.videoFramesReceived == 0)
        #expect(received.audioPacketsReceived > 0)
        #expect(received.audioBuffersReceived == 0)
        // No jitter buffer before the counter (its task and timer thread per stream): rtpbin got
        // the pass-through, and on loopback nothing comes out of order.
        let graph = harness.offerer?.pipelineGraph ?? ""
        #expect(graph.contains("CgwRtpPass"), "no pass-through in the counted link's rtpbin")
        #expect(!graph.contains("GstRtpJitterBuffer"), "a jitter buffer in the counted link")
        #expect(received.videoPacketsLate == 0)
    }
}
