// One payloader per feed (issue 24 item 5; cgw_rtp_feed.c): a feed's access units are made into
// RTP packets once, and every link sends its own copies of them (its header, the payload shared).
import CGstWebRTC
import Synchronization

/// The RTP packets of one access unit, made by a feed's `H264Packetizer`; shared (read only) by
/// every link that sends them, freed with the last reference.
public final class RTPPackets: @unchecked Sendable {
    // @unchecked: the buffer list is never changed after it is made; links only read it.
    let pointer: OpaquePointer
    /// The packetizer that made them (a link's timestamps go on from its last one when this changes).
    let source: UInt64

    fileprivate init(pointer: OpaquePointer, source: UInt64) {
        self.pointer = pointer
        self.source = source
    }

    deinit { cgw_rtp_packets_unref(pointer) }

    public var count: Int { Int(cgw_rtp_packets_count(pointer)) }
}

/// A feed's one `rtph264pay`, run on the caller's thread (calls are serialised in C).
public final class H264Packetizer: Sendable {
    private let pointer: GstRef
    private let source: UInt64
    private static let nextSource = Atomic<UInt64>(1)

    public init() throws(WebRTCLinkError) {
        try GStreamerRuntime.start()
        var error: UnsafeMutablePointer<CChar>?
        guard let made = cgw_h264_packetizer_new(&error) else { throw .pipeline(takeCString(error)) }
        pointer = GstRef(made)
        source = Self.nextSource.add(1, ordering: .relaxed).newValue
    }

    deinit { cgw_h264_packetizer_free(pointer.pointer) }

    /// The packets of one Annex B access unit; nil when none were made.
    public func packetize(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool) -> RTPPackets? {
        guard let base = accessUnit.baseAddress, !accessUnit.isEmpty,
              let made = cgw_h264_packetize(pointer.pointer, base, accessUnit.count, !isKeyFrame)
        else { return nil }
        return RTPPackets(pointer: made, source: source)
    }
}
