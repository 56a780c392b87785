// Access units sent as RTP packets through the link's own pad (`.h264AccessUnits`, a shared
// encoder's fan-out; issue 24 item 5), on the pushing thread. The packets are the feed's
// (`RTPPackets`, one payloader per feed): the link pushes its copies of them (its SSRC, payload
// type, sequence numbers and timestamp offset; cgw_rtp_feed.c) straight into webrtcbin. A unit
// that comes without packets (a caller pushing access units itself) is made into packets by the
// link's own packetizer. Before the link is connected nothing is pushed: webrtcbin holds its sink
// pads blocked until the answer, and the pushing thread is a fan-out lane shared by many links.
// What comes meanwhile is held from its last key frame on (bounded) and sent the moment the link
// connects, so the first picture does not wait for a new key frame.
import Dispatch
import CGstWebRTC

/// The units held until the link connects (behind `PeerCore.heldVideo`, which also keeps the
/// pushes of one link in order), and the link's own packetizer once it needed one.
struct HeldVideo {
    /// At most the recent units a link starts from (`RecentUnits.Limit.standard`, 16) and what
    /// comes while it connects, and 4 MiB: longer, and the link waits for the key frame its
    /// connection asks for.
    static let maxUnits = 24
    static let maxBytes = 4 << 20

    var units: [(bytes: [UInt8], keyFrame: Bool, packets: RTPPackets?)] = []
    var bytes = 0
    /// For units pushed without their feed's packets; made at the first such unit.
    var ownPacketizer: H264Packetizer?

    mutating func hold(_ unit: UnsafeRawBufferPointer, keyFrame: Bool, packets: RTPPackets?) {
        if keyFrame {
            clear()
        } else if units.isEmpty {
            return  // nothing to decode it from
        }
        guard units.count < Self.maxUnits, bytes + unit.count <= Self.maxBytes else {
            clear()
            return
        }
        units.append((Array(unit), keyFrame, packets))
        bytes += unit.count
    }

    mutating func clear() {
        units.removeAll()
        bytes = 0
    }

    /// The unit's packets: the feed's, or the link's own packetizer's.
    mutating func packets(of unit: UnsafeRawBufferPointer, keyFrame: Bool, feed: RTPPackets?) -> RTPPackets? {
        if let feed { return feed }
        if ownPacketizer == nil { ownPacketizer = try? H264Packetizer() }
        return ownPacketizer?.packetize(unit, isKeyFrame: keyFrame)
    }
}

extension PeerCore {
    func pushThroughPad(_ bytes: UnsafeRawBufferPointer, ptsNanos: Int64?, keyFrame: Bool, packets: RTPPackets?) -> Bool {
        heldVideo.withLock { held in
            guard let (pad, pipeline, connected) = fields.withLock({ f -> (OpaquePointer, OpaquePointer, Bool)? in
                guard f.phase != .closed, let pad = f.videoPad, let pipeline = f.pipeline else { return nil }
                return (pad, pipeline, f.state == .connected)
            }) else { return false }
            guard connected else {
                held.hold(bytes, keyFrame: keyFrame, packets: packets)
                return true
            }
            sendHeld(&held, pad: pad, pipeline: pipeline)
            return push(bytes, keyFrame: keyFrame, ptsNanos: ptsNanos, packets: packets, held: &held, pad: pad, pipeline: pipeline)
        }
    }

    /// Sends what was held, now that the link is connected (off webrtcbin's signalling thread).
    func sendHeldVideoSoon() {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            heldVideo.withLock { held in
                guard !held.units.isEmpty,
                      let (pad, pipeline) = fields.withLock({ f -> (OpaquePointer, OpaquePointer)? in
                          guard f.phase != .closed, f.state == .connected, let pad = f.videoPad, let pipeline = f.pipeline
                          else { return nil }
                          return (pad, pipeline)
                      })
                else { return }
                sendHeld(&held, pad: pad, pipeline: pipeline)
            }
        }
    }

    private func sendHeld(_ held: inout HeldVideo, pad: OpaquePointer, pipeline: OpaquePointer) {
        guard !held.units.isEmpty else { return }
        let units = held.units
        held.clear()
        for unit in units {
            _ = unit.bytes.withUnsafeBytes {
                push($0, keyFrame: unit.keyFrame, ptsNanos: nil, packets: unit.packets, held: &held, pad: pad, pipeline: pipeline)
            }
        }
    }

    /// Pushes the link's copies of the unit's packets; the frames (and key frames) it sends are
    /// counted here, one per unit.
    private func push(
        _ bytes: UnsafeRawBufferPointer, keyFrame: Bool, ptsNanos: Int64?, packets feedPackets: RTPPackets?,
        held: inout HeldVideo, pad: OpaquePointer, pipeline: OpaquePointer
    ) -> Bool {
        guard let packets = held.packets(of: bytes, keyFrame: keyFrame, feed: feedPackets) else { return false }
        let (pts, _) = nextPresentationTime(pipeline: pipeline, ptsNanos: ptsNanos)
        guard cgw_rtp_pusher_push(pad, packets.pointer, packets.source, pts) else { return false }
        count {
            $0.videoFramesSent += 1
            if keyFrame { $0.videoKeyFramesSent += 1 }
        }
        return true
    }
}
