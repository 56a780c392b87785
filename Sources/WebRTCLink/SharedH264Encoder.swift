// One H.264 encoder for every link that streams the same camera at the same size (issue 11): raw
// or captured frames in, constrained-baseline access units out to a `VideoFanOut`. Key frames on
// request (a join, a PLI/FIR, a stream switch) go through the fan-out's rate limit.
//
// Threads: `push` from the camera's thread; access units come out on the encoder's streaming
// thread; the bus is watched on the shared loop. Mutable state is behind one Mutex (`state`).
import CGstWebRTC
import Foundation
import Synchronization

/// The codec a shared encoder makes: H.264 for RTP (PROTOCOL.md 4), H.265 for the `fmp4Stream`
/// data channel (PROTOCOL.md 7).
public enum SharedVideoCodec: String, Sendable, Hashable {
    case h264
    case h265
}

public final class SharedH264Encoder: Sendable {
    /// What comes in.
    public enum Input: Sendable, Hashable {
        /// I420 frames of exactly `video`'s size.
        case i420
        /// Frames as a camera captured them (JPEG, YUYV, NV12) at the capture size; decoded and
        /// scaled to `video`'s size here.
        case captured(CapturedFormat, width: Int, height: Int)
    }

    /// Counters of the encoder; they only grow.
    public struct Statistics: Sendable, Hashable {
        /// Frames pushed in.
        public var framesIn = 0
        /// Frames dropped at the encoder's input: its queue (`PipelineDescriptions
        /// .sharedEncoderQueuedFrames`) was full, the encoder's thread that far behind. The appsrc
        /// is leaky upstream, and GStreamer 1.22 returns an error flow for the frame it drops
        /// ("dropped new buffer, we are full"); nothing is pushed once the encoder is stopped.
        public var framesDropped = 0
        /// Access units that came out.
        public var accessUnitsOut = 0
        public var keyFramesOut = 0
    }

    public let video: VideoFormat
    public let input: Input
    /// The encoder element ("x264enc", "v4l2h264enc"; "x265enc" for H.265).
    public let encoderFactory: String
    /// Where the access units go.
    public let fanOut: VideoFanOut
    private let description: String
    /// What changes after init; the GStreamer pointers are owned references until `stop()`.
    private struct State {
        var pipeline: OpaquePointer?
        var appsrc: OpaquePointer?
        var encoded: OpaquePointer?
        var busWatch: UInt32 = 0
        var statistics = Statistics()
        var failure: String?
        var stopped = false
    }
    private let state = Mutex(State())

    public init(
        video: VideoFormat, input: Input, encoder: H264EncoderChoice = .automatic, bitrateKbps: Int? = nil,
        keyFrameIntervalSeconds: Int = 2, minimumKeyFrameSpacing: Duration = .milliseconds(250),
        output: VideoFanOut? = nil, codec: SharedVideoCodec = .h264
    ) throws(WebRTCLinkError) {
        try GStreamerRuntime.start()
        self.video = video
        self.input = input
        if codec == .h265 {
            guard GStreamerRuntime.hasElement("x265enc") else { throw .gstreamerUnavailable("x265enc (gst-plugins-ugly) is missing") }
            encoderFactory = "x265enc"
        } else {
            encoderFactory = PipelineDescriptions.encoderFactory(
                for: encoder, hardwareAvailable: GStreamerRuntime.hasElement("v4l2h264enc"))
        }
        description = PipelineDescriptions.sharedEncoder(
            video: video, input: input, encoderFactory: encoderFactory,
            bitrateKbps: bitrateKbps ?? PipelineDescriptions.defaultBitrateKbps(video),
            keyFrameIntervalSeconds: keyFrameIntervalSeconds)
        if let output {
            // The owner of `output` routes its key frame requests to `forceKeyFrame()`.
            fanOut = output
        } else {
            let box = LateEncoderReference()
            fanOut = VideoFanOut(minimumKeyFrameSpacing: minimumKeyFrameSpacing) { box.encoder?.forceKeyFrame() }
            box.set(self)
        }
    }

    deinit { stop() }

    /// Builds and plays the pipeline.
    public func start() throws(WebRTCLinkError) {
        var error: UnsafeMutablePointer<CChar>?
        guard let pipeline = cgw_pipeline_new_uncounted(description, &error) else {
            throw .pipeline(takeCString(error))
        }
        let appsrc = cgw_bin_get_child(pipeline, "videoin")
        let sink = cgw_bin_get_child(pipeline, "encoded")
        let encoded = cgw_bin_get_child(pipeline, "videoencoded")
        let refs = (pipeline: GstRef(pipeline), appsrc: appsrc.map(GstRef.init), encoded: encoded.map(GstRef.init))
        state.withLock { s in
            s.pipeline = refs.pipeline.pointer
            s.appsrc = refs.appsrc?.pointer
            s.encoded = refs.encoded?.pointer
        }
        guard let sink, appsrc != nil, encoded != nil else {
            if let sink { cgw_element_unref(sink) }
            stop()
            throw .pipeline("the shared encoder pipeline lacks videoin, videoencoded or encoded")
        }
        _ = cgw_appsink_on_buffer(sink, onEncodedAccessUnit, retainedBox(), releaseEncoderBox)
        cgw_element_unref(sink)
        let watch = cgw_bus_watch(pipeline, onEncoderBusMessage, retainedBox(), releaseEncoderBox)
        state.withLock { $0.busWatch = watch }
        guard cgw_pipeline_play(pipeline) else {
            stop()
            throw .pipeline("the shared encoder refused to play: \(description)")
        }
    }

    /// Pushes one frame (I420 of `video`'s size, or a captured frame of the capture size). False
    /// when it does not fit or the encoder is stopped. Timestamps come from the pipeline clock.
    @discardableResult
    public func push(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch input {
        case .i420:
            guard bytes.count == WebRTCAnswerer.i420Size(width: video.width, height: video.height) else { return false }
        case .captured(let format, let width, let height):
            if let size = format.frameSize(width: width, height: height), bytes.count != size { return false }
            if bytes.isEmpty { return false }
        }
        // A reference of its own for the push: `stop` on another thread drops the encoder's.
        guard let appsrc = state.withLock({ $0.stopped ? nil : $0.appsrc.flatMap { OpaquePointer(cgw_object_ref(UnsafeMutableRawPointer($0))) } })
        else { return false }
        let ok = cgw_appsrc_push(appsrc, bytes.baseAddress, bytes.count, -1, -1, false)
        cgw_object_unref(UnsafeMutableRawPointer(appsrc))
        state.withLock { s in
            s.statistics.framesIn += 1
            if !ok { s.statistics.framesDropped += 1 }
        }
        return ok
    }

    @discardableResult
    public func push(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { push($0) } }

    public var stats: Statistics { state.withLock { $0.statistics } }
    /// The first error the pipeline reported, if any.
    public var error: String? { state.withLock { $0.failure } }

    /// Stops the pipeline (idempotent). Subscribers get nothing more.
    public func stop() {
        let (pipeline, appsrc, encoded, watch): (OpaquePointer?, OpaquePointer?, OpaquePointer?, UInt32) = state.withLock { s in
            guard !s.stopped else { return (nil, nil, nil, 0) }
            s.stopped = true
            defer {
                s.pipeline = nil
                s.appsrc = nil
                s.encoded = nil
            }
            return (s.pipeline, s.appsrc, s.encoded, s.busWatch)
        }
        if watch != 0 { cgw_shared_loop_remove_source(watch) }
        if let pipeline {
            cgw_pipeline_stop(pipeline)
            cgw_element_unref(pipeline)
        }
        if let appsrc { cgw_element_unref(appsrc) }
        if let encoded { cgw_element_unref(encoded) }
    }

    // MARK: Callbacks

    /// Makes the next access unit a key frame, now (no rate limit: ask `fanOut` for that).
    public func forceKeyFrame() {
        // The pad is a reference of its own, taken under the lock (`stop` drops the element's).
        guard let pad = state.withLock({ s in s.stopped ? nil : s.encoded.flatMap { cgw_element_get_static_pad($0, "src") } })
        else { return }
        _ = cgw_pad_request_key_unit_upstream(pad)
        cgw_pad_unref(pad)
    }

    fileprivate func accessUnit(_ bytes: UnsafeRawBufferPointer, isKeyFrame: Bool) {
        state.withLock { s in
            s.statistics.accessUnitsOut += 1
            if isKeyFrame { s.statistics.keyFramesOut += 1 }
        }
        fanOut.deliver(bytes, isKeyFrame: isKeyFrame)
    }

    fileprivate func busMessage(kind: Int32, source: String, text: String) {
        guard kind == Int32(CGW_BUS_ERROR) else { return }
        state.withLock { s in if s.failure == nil { s.failure = "\(source): \(text)" } }
    }

    private func retainedBox() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(EncoderBox(self)).toOpaque()
    }
}

/// What C holds for the encoder: a weak reference (no cycle through C).
private final class EncoderBox: Sendable {
    weak let encoder: SharedH264Encoder?
    init(_ encoder: SharedH264Encoder) { self.encoder = encoder }
}

/// The fan-out's key frame requests reach the encoder through this: the fan-out is made before
/// the encoder exists, so the weak reference is set once the encoder is made.
private final class LateEncoderReference: Sendable {
    private struct Weak { weak var encoder: SharedH264Encoder? }
    private let target = Mutex(Weak())
    func set(_ encoder: SharedH264Encoder) { target.withLock { $0.encoder = encoder } }
    /// Read under the lock; the caller calls it with the lock released.
    var encoder: SharedH264Encoder? { target.withLock { $0.encoder } }
}

private func encoderFrom(_ context: UnsafeMutableRawPointer?) -> SharedH264Encoder? {
    guard let context else { return nil }
    return Unmanaged<EncoderBox>.fromOpaque(context).takeUnretainedValue().encoder
}

private func releaseEncoderBox(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<EncoderBox>.fromOpaque(context).release()
}

private func onEncodedAccessUnit(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int, _ pts: Int64, _ key: Bool
) {
    guard let encoder = encoderFrom(context), let bytes, length > 0 else { return }
    encoder.accessUnit(UnsafeRawBufferPointer(start: bytes, count: length), isKeyFrame: key)
}

private func onEncoderBusMessage(
    _ context: UnsafeMutableRawPointer?, _ kind: Int32, _ source: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?
) {
    encoderFrom(context)?.busMessage(
        kind: kind, source: source.map { String(cString: $0) } ?? "", text: text.map { String(cString: $0) } ?? "")
}
