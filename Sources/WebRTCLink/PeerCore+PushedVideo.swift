// Access units pushed through the link's own pad (`.h264AccessUnits`, a shared encoder's fan-out;
// issue 24 item 5), on the pushing thread. Before the link is connected nothing is pushed:
// webrtcbin holds its sink pads blocked until the answer, and the pushing thread is a fan-out lane
// shared by many links. What comes meanwhile is held from its last key frame on (bounded) and sent
// the moment the link connects, so the first picture does not wait for a new key frame.
import Dispatch
import CGstWebRTC

/// The units held until the link connects (behind `PeerCore.heldVideo`, which also keeps the
/// pushes of one link in order).
struct HeldVideo {
    /// At most the recent units a link starts from (`RecentUnits.Limit.standard`, 16) and what
    /// comes while it connects, and 4 MiB: longer, and the link waits for the key frame its
    /// connection asks for.
    static let maxUnits = 24
    static let maxBytes = 4 << 20

    var units: [(bytes: [UInt8], keyFrame: Bool)] = []
    var bytes = 0

    mutating func hold(_ unit: UnsafeRawBufferPointer, keyFrame: Bool) {
        if keyFrame {
            units.removeAll(keepingCapacity: true)
            bytes = 0
        } else if units.isEmpty {
            return  // nothing to decode it from
        }
        guard units.count < Self.maxUnits, bytes + unit.count <= Self.maxBytes else {
            units.removeAll()
            bytes = 0
            return
        }
        units.append((Array(unit), keyFrame))
        bytes += unit.count
    }
}

extension PeerCore {
    func pushThroughPad(_ bytes: UnsafeRawBufferPointer, ptsNanos: Int64?, keyFrame: Bool) -> Bool {
        heldVideo.withLock { held in
            guard let (pad, pipeline, connected) = fields.withLock({ f -> (OpaquePointer, OpaquePointer, Bool)? in
                guard f.phase != .closed, let pad = f.videoPad, let pipeline = f.pipeline else { return nil }
                return (pad, pipeline, f.state == .connected)
            }) else { return false }
            guard connected else {
                held.hold(bytes, keyFrame: keyFrame)
                return true
            }
            sendHeld(&held, pad: pad, pipeline: pipeline)
            return push(bytes, keyFrame: keyFrame, ptsNanos: ptsNanos, pad: pad, pipeline: pipeline)
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
        for unit in held.units {
            _ = unit.bytes.withUnsafeBytes { push($0, keyFrame: unit.keyFrame, ptsNanos: nil, pad: pad, pipeline: pipeline) }
        }
        held = HeldVideo()
    }

    private func push(
        _ bytes: UnsafeRawBufferPointer, keyFrame: Bool, ptsNanos: Int64?, pad: OpaquePointer, pipeline: OpaquePointer
    ) -> Bool {
        let (pts, duration) = nextPresentationTime(pipeline: pipeline, ptsNanos: ptsNanos)
        return cgw_pusher_push(pad, bytes.baseAddress, bytes.count, pts, duration, !keyFrame)
    }
}
