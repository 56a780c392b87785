// What the core counts: packets and bytes from the peer (and when it last heard from it), frames
// and access units both ways; and the pipeline graph, for debugging.
import CGstWebRTC
import Dispatch

extension PeerCore {
    /// An access unit of the peer's video, counted at the RTP level (count-only receive path).
    func receivedAccessUnit(isKeyFrame: Bool, packetsMissing: Int = 0, packetsLate: Int = 0, timestampAdvance: Int = 0) {
        let now = cgw_unix_time_ns()
        fields.withLock { f in
            f.statistics.videoAccessUnitsReceived += 1
            if isKeyFrame { f.statistics.videoKeyFramesReceived += 1 }
            f.statistics.videoPacketsMissing += packetsMissing
            f.statistics.videoPacketsLate += packetsLate
            if packetsMissing > 0 { f.statistics.videoSequenceGaps += 1 }
            f.statistics.videoTimestampSpan += timestampAdvance
            if f.lastAccessUnitUnixNanos == 0 {
                f.statistics.firstAccessUnitUnixNanos = now
            } else {
                let gapMs = Int((now - f.lastAccessUnitUnixNanos) / 1_000_000)
                f.statistics.longestAccessUnitGapMs = max(f.statistics.longestAccessUnitGapMs, gapMs)
            }
            f.lastAccessUnitUnixNanos = now
            f.statistics.lastAccessUnitUnixNanos = now
        }
    }

    func count(_ update: (inout LinkStatistics) -> Void) {
        fields.withLock { update(&$0.statistics) }
    }

    /// Something came from the peer: RTP on a receive pad, or an RTCP report.
    func heardFromPeer(rtpPackets: Int = 0, rtpBytes: Int = 0, media: String = "", rtcpReports: Int = 0) {
        let now = DispatchTime.now().uptimeNanoseconds
        fields.withLock { f in
            if media == "video" { f.statistics.videoPacketsReceived += rtpPackets }
            if media == "audio" { f.statistics.audioPacketsReceived += rtpPackets }
            f.statistics.rtpBytesReceived += rtpBytes
            f.statistics.rtcpReportsReceived += rtcpReports
            f.lastPeerPacketUptime = now
        }
    }

    var stats: LinkStatistics {
        fields.withLock { f in
            var copy = f.statistics
            copy.stalledReceiverRestarts = f.stalledRestarts
            return copy
        }
    }

    /// Tests: starts counting the segment and custom sticky events that leave webrtcbin's bundle
    /// funnel (`cgw_bundle_events.c`); false before negotiation made the funnel.
    func countBundledEvents() -> Bool {
        guard let webrtc = fields.withLock({ $0.phase == .closed ? nil : $0.webrtc }) else { return false }
        return cgw_webrtc_count_bundled_events(webrtc)
    }

    /// Tests: the events counted since `countBundledEvents()` (nil when not counting).
    var bundledEvents: Int? {
        guard let webrtc = fields.withLock({ $0.phase == .closed ? nil : $0.webrtc }) else { return nil }
        let count = cgw_webrtc_bundled_events(webrtc)
        return count >= 0 ? Int(count) : nil
    }

    /// The pipeline as a Graphviz graph, for debugging ("" before start).
    var pipelineGraph: String {
        guard let pipeline = fields.withLock({ $0.pipeline }) else { return "" }
        return takeCString(cgw_pipeline_graph_dot(pipeline))
    }
}
