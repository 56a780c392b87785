// What the core counts: packets and bytes from the peer (and when it last heard from it), frames
// and access units both ways; and the pipeline graph, for debugging.
import CGstWebRTC
import Dispatch

extension PeerCore {
    /// A depayloaded access unit of the peer's video (count-only receive path).
    func receivedAccessUnit(isKeyFrame: Bool) {
        let now = cgw_unix_time_ns()
        lock.withLock {
            statistics.videoAccessUnitsReceived += 1
            if isKeyFrame { statistics.videoKeyFramesReceived += 1 }
            if lastAccessUnitUnixNanos == 0 {
                statistics.firstAccessUnitUnixNanos = now
            } else {
                let gapMs = Int((now - lastAccessUnitUnixNanos) / 1_000_000)
                statistics.longestAccessUnitGapMs = max(statistics.longestAccessUnitGapMs, gapMs)
            }
            lastAccessUnitUnixNanos = now
            statistics.lastAccessUnitUnixNanos = now
        }
    }

    func count(_ update: (inout LinkStatistics) -> Void) {
        lock.withLock { update(&statistics) }
    }

    /// Something came from the peer: RTP on a receive pad, or an RTCP report.
    func heardFromPeer(rtpPackets: Int = 0, rtpBytes: Int = 0, media: String = "", rtcpReports: Int = 0) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock {
            if media == "video" { statistics.videoPacketsReceived += rtpPackets }
            if media == "audio" { statistics.audioPacketsReceived += rtpPackets }
            statistics.rtpBytesReceived += rtpBytes
            statistics.rtcpReportsReceived += rtcpReports
            lastPeerPacketUptime = now
        }
    }

    var stats: LinkStatistics {
        lock.withLock {
            var copy = statistics
            copy.stalledReceiverRestarts = stalledRestarts
            return copy
        }
    }

    /// The pipeline as a Graphviz graph, for debugging ("" before start).
    var pipelineGraph: String {
        guard let pipeline = lock.withLock({ self.pipeline }) else { return "" }
        return takeCString(cgw_pipeline_graph_dot(pipeline))
    }
}
