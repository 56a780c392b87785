// The app's H.265 decoder for the `fmp4Stream` data channel (PROTOCOL.md 7): Annex B access
// units (from `FMP4Depacketizer`) in, decoded frames' luma out, as the RTP receive path gives
// them (`DecodedVideoFrame`), so the latency stamp reader works the same on both.
//
// Threads: `push` from any thread (the SCTP thread); frames come out on the decoder's streaming
// thread.
import CGstWebRTC
import Foundation
import Synchronization

public final class HEVCDecoder: Sendable {
    /// Counters; they only grow.
    public struct Statistics: Sendable, Hashable {
        public var accessUnitsIn = 0
        public var refused = 0
        public var framesOut = 0
        public var lastWidth = 0
        public var lastHeight = 0
    }

    static let description = "appsrc name=videoin is-live=true format=time do-timestamp=true max-buffers=0"
        + " caps=\"video/x-h265,stream-format=byte-stream,alignment=au\""
        + " ! h265parse ! avdec_h265 max-threads=1 ! videoconvert ! video/x-raw,format=I420"
        + " ! appsink name=frames sync=false async=false max-buffers=0 drop=false"

    private let onFrame: @Sendable (DecodedVideoFrame) -> Void
    /// What changes after init; the GStreamer pointers are owned references until `stop()`.
    private struct State {
        var pipeline: OpaquePointer?
        var appsrc: OpaquePointer?
        var statistics = Statistics()
        var failure: String?
        var busWatch: UInt32 = 0
        var stopped = false
    }
    private let state = Mutex(State())

    public init(onFrame: @escaping @Sendable (DecodedVideoFrame) -> Void) {
        self.onFrame = onFrame
    }

    deinit { stop() }

    public func start() throws(WebRTCLinkError) {
        try GStreamerRuntime.start()
        guard GStreamerRuntime.hasElement("avdec_h265") else { throw .gstreamerUnavailable("avdec_h265 (gstreamer1.0-libav) is missing") }
        var error: UnsafeMutablePointer<CChar>?
        guard let pipeline = cgw_pipeline_new_from_description(Self.description, &error) else {
            throw .pipeline(takeCString(error))
        }
        let appsrc = cgw_bin_get_child(pipeline, "videoin")
        let sink = cgw_bin_get_child(pipeline, "frames")
        let refs = (pipeline: GstRef(pipeline), appsrc: appsrc.map(GstRef.init))
        state.withLock { s in
            s.pipeline = refs.pipeline.pointer
            s.appsrc = refs.appsrc?.pointer
        }
        guard let sink, appsrc != nil else {
            if let sink { cgw_element_unref(sink) }
            stop()
            throw .pipeline("the H.265 decoder pipeline lacks videoin or frames")
        }
        _ = cgw_appsink_on_video_frame(sink, onDecodedFrame, retainedBox(), releaseDecoderBox)
        cgw_element_unref(sink)
        let watch = cgw_bus_watch(pipeline, onDecoderBusMessage, retainedBox(), releaseDecoderBox)
        state.withLock { $0.busWatch = watch }
        guard cgw_pipeline_play(pipeline) else {
            stop()
            throw .pipeline("the H.265 decoder refused to play")
        }
    }

    /// Pushes one Annex B access unit (parameter sets before key frames). False when stopped.
    @discardableResult
    public func push(_ accessUnit: [UInt8], isKeyFrame: Bool) -> Bool {
        guard let appsrc = state.withLock({ $0.stopped ? nil : $0.appsrc }), !accessUnit.isEmpty else { return false }
        let ok = accessUnit.withUnsafeBytes { cgw_appsrc_push(appsrc, $0.baseAddress, $0.count, -1, -1, !isKeyFrame) }
        state.withLock { s in
            s.statistics.accessUnitsIn += 1
            if !ok { s.statistics.refused += 1 }
        }
        return ok
    }

    public var stats: Statistics { state.withLock { $0.statistics } }
    /// The first error the decoder reported, if any.
    public var error: String? { state.withLock { $0.failure } }

    public func stop() {
        let (pipeline, appsrc, watch): (OpaquePointer?, OpaquePointer?, UInt32) = state.withLock { s in
            guard !s.stopped else { return (nil, nil, 0) }
            s.stopped = true
            defer {
                s.pipeline = nil
                s.appsrc = nil
            }
            return (s.pipeline, s.appsrc, s.busWatch)
        }
        if watch != 0 { cgw_shared_loop_remove_source(watch) }
        if let appsrc {
            cgw_appsrc_end_of_stream(appsrc)
            cgw_element_unref(appsrc)
        }
        if let pipeline {
            cgw_pipeline_stop(pipeline)
            cgw_element_unref(pipeline)
        }
    }

    fileprivate func frame(luma: UnsafePointer<UInt8>?, width: Int32, height: Int32, stride: Int32, pts: Int64, arrival: Int64) {
        state.withLock { s in
            s.statistics.framesOut += 1
            s.statistics.lastWidth = Int(width)
            s.statistics.lastHeight = Int(height)
        }
        guard let luma, width > 0, height > 0, stride >= width else { return }
        let bytes = Array(UnsafeBufferPointer(start: luma, count: Int(stride) * Int(height)))
        onFrame(DecodedVideoFrame(
            luma: bytes, width: Int(width), height: Int(height), stride: Int(stride), arrivalUnixNanos: arrival, ptsNanos: pts))
    }

    fileprivate func busMessage(kind: Int32, source: String, text: String) {
        guard kind == Int32(CGW_BUS_ERROR) else { return }
        state.withLock { s in if s.failure == nil { s.failure = "\(source): \(text)" } }
    }

    private func retainedBox() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(DecoderBox(self)).toOpaque()
    }
}

/// What C holds for the decoder: a weak reference (no cycle through C).
private final class DecoderBox: Sendable {
    weak let decoder: HEVCDecoder?
    init(_ decoder: HEVCDecoder) { self.decoder = decoder }
}

private func decoderFrom(_ context: UnsafeMutableRawPointer?) -> HEVCDecoder? {
    guard let context else { return nil }
    return Unmanaged<DecoderBox>.fromOpaque(context).takeUnretainedValue().decoder
}

private func releaseDecoderBox(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<DecoderBox>.fromOpaque(context).release()
}

private func onDecodedFrame(
    _ context: UnsafeMutableRawPointer?, _ sample: OpaquePointer?, _ luma: UnsafePointer<UInt8>?, _ width: Int32,
    _ height: Int32, _ stride: Int32, _ pts: Int64, _ arrival: Int64
) {
    decoderFrom(context)?.frame(luma: luma, width: width, height: height, stride: stride, pts: pts, arrival: arrival)
}

private func onDecoderBusMessage(
    _ context: UnsafeMutableRawPointer?, _ kind: Int32, _ source: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?
) {
    decoderFrom(context)?.busMessage(
        kind: kind, source: source.map { String(cString: $0) } ?? "", text: text.map { String(cString: $0) } ?? "")
}
