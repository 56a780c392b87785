import CGStreamer
import CGstCore
import Synchronization

/// A GStreamer pipeline fed through an appsrc and drained through an appsink, without a GLib main
/// loop: `push` and `pull` block the calling thread only. Errors on the bus surface as thrown
/// `CameraError.encoder` from `pull` and `waitForEnd`.
// @unchecked: holds GstElement pointers (C objects; GStreamer locks them itself).
public final class GStreamerPipeline: @unchecked Sendable {
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let elements = Mutex<[String: UnsafeMutablePointer<GstElement>]>([:])
    public let description: String

    /// Builds a pipeline from gst-launch syntax. Name the appsrc `src` and the appsink `sink`
    /// (or pass other names to `push`/`pull`).
    public init(_ description: String) throws(CameraError) {
        guard cgst_core_initialize(nil) else { throw .encoder("GStreamer failed to initialise") }
        var message: UnsafeMutablePointer<CChar>?
        guard let parsed = cgst_core_parse_launch(description, &message) else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            cgst_core_free(message)
            throw .encoder("cannot build pipeline \"\(description)\": \(text)")
        }
        // CGstCore hands the element over opaque (its header includes no GStreamer header).
        pipeline = UnsafeMutablePointer<GstElement>(parsed)
        self.description = description
    }

    deinit {
        _ = cgst_element_set_state(pipeline, CGST_STATE_NULL)
        elements.withLock { for element in $0.values { cgst_object_unref(element) } }
        cgst_object_unref(pipeline)
    }

    /// True when every named element factory is installed (a plugin check for tests and errors).
    public static func hasElements(_ names: [String]) -> Bool {
        guard cgst_core_initialize(nil) else { return false }
        return names.allSatisfy { cgst_element_factory_exists($0) == 1 }
    }

    private func element(_ name: String) throws(CameraError) -> UnsafeMutablePointer<GstElement> {
        let found = elements.withLock { cache -> UnsafeMutablePointer<GstElement>? in
            if let e = cache[name] { return e }
            guard let e = cgst_bin_get_element(pipeline, name) else { return nil }
            cache[name] = e
            return e
        }
        guard let found else { throw .encoder("no element named \(name) in \"\(description)\"") }
        return found
    }

    public func play() throws(CameraError) {
        if cgst_element_set_state(pipeline, CGST_STATE_PLAYING) == 0 {
            throw .encoder(busError(timeoutNs: 0) ?? "pipeline refused to start: \(description)")
        }
    }

    public func stop() {
        _ = cgst_element_set_state(pipeline, CGST_STATE_NULL)
    }

    /// Copies `bytes` into a buffer and pushes it into the appsrc.
    public func push(_ bytes: [UInt8], ptsNs: UInt64? = nil, durationNs: UInt64? = nil, into name: String = "src") throws(CameraError) {
        let src = try element(name)
        let flow = bytes.withUnsafeBytes { raw in
            cgst_app_src_push_copy(src, raw.baseAddress, raw.count, ptsNs ?? UInt64.max, durationNs ?? UInt64.max)
        }
        if flow != 0 {
            throw .encoder(busError(timeoutNs: 0) ?? "appsrc refused a buffer (flow \(flow))")
        }
    }

    public func endOfStream(_ name: String = "src") throws(CameraError) {
        _ = cgst_app_src_end_of_stream(try element(name))
    }

    /// The next sample from the appsink: nil at end of stream or after `timeoutNs` without one.
    public func pull(from name: String = "sink", timeoutNs: UInt64 = 5_000_000_000) throws(CameraError) -> GStreamerSample? {
        let sink = try element(name)
        guard let sample = cgst_app_sink_pull(sink, timeoutNs) else {
            if let error = busError(timeoutNs: 0) { throw .encoder(error) }
            return nil
        }
        defer { cgst_sample_unref(sample) }
        let size = cgst_sample_copy_bytes(sample, nil, 0)
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = cgst_sample_copy_bytes(sample, buffer.baseAddress, size) >= size ? size : 0
        }
        var width: Int32 = 0, height: Int32 = 0
        var strides: (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        var offsets: (Int, Int, Int, Int) = (0, 0, 0, 0)
        let planes = withUnsafeMutableBytes(of: &strides) { s in
            withUnsafeMutableBytes(of: &offsets) { o in
                cgst_sample_video_layout(sample, &width, &height,
                                         s.baseAddress?.assumingMemoryBound(to: Int32.self),
                                         o.baseAddress?.assumingMemoryBound(to: Int.self))
            }
        }
        let strideList = [strides.0, strides.1, strides.2, strides.3].prefix(Int(planes)).map(Int.init)
        let offsetList = [offsets.0, offsets.1, offsets.2, offsets.3].prefix(Int(planes)).map { $0 }
        let pts = cgst_sample_pts(sample)
        return GStreamerSample(bytes: bytes, width: Int(width), height: Int(height), strides: strideList,
                               offsets: offsetList, ptsNs: pts == UInt64.max ? nil : pts)
    }

    /// Waits for end of stream; throws the first error the pipeline posts.
    public func waitForEnd(timeoutNs: UInt64) throws(CameraError) {
        var message: UnsafeMutablePointer<CChar>?
        let r = cgst_bus_poll_error(pipeline, timeoutNs, &message)
        if r == 2 {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            cgst_free(message)
            throw .encoder(text)
        }
        if r == 0 { throw .encoder("pipeline did not finish within \(timeoutNs / 1_000_000) ms") }
    }

    private func busError(timeoutNs: UInt64) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        guard cgst_bus_poll_error(pipeline, timeoutNs, &message) == 2 else { return nil }
        let text = message.map { String(cString: $0) } ?? "unknown error"
        cgst_free(message)
        return text
    }
}

/// A buffer pulled from an appsink, with its raw-video layout when it is raw video.
public struct GStreamerSample: Sendable {
    public var bytes: [UInt8]
    /// 0 unless the caps are raw video.
    public var width: Int
    public var height: Int
    public var strides: [Int]
    public var offsets: [Int]
    public var ptsNs: UInt64?

    /// Reads the latency stamp from the luma plane of a raw video sample (planar or YUY2).
    public func readStamp() throws(StampReadError) -> LatencyStamp {
        guard let stride = strides.first, let offset = offsets.first, offset <= bytes.count else {
            throw .planeTooShort(bytes: bytes.count, needed: 1)
        }
        let pixelStride = strides.count == 1 && stride >= 2 * width ? 2 : 1
        let luma = Array(bytes[offset...])
        return try LatencyStamp.read(luma: luma, width: width, height: height, stride: stride, pixelStride: pixelStride)
    }

    /// The planes copied out without row padding, as an I420 frame (for I420 samples).
    public func tightI420() -> [UInt8] {
        guard strides.count == 3 else { return bytes }
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        var out = [UInt8]()
        out.reserveCapacity(width * height + 2 * cw * ch)
        for (plane, (w, h)) in [(width, height), (cw, ch), (cw, ch)].enumerated() {
            for row in 0..<h {
                let start = offsets[plane] + row * strides[plane]
                guard start + w <= bytes.count else { return out }
                out.append(contentsOf: bytes[start..<(start + w)])
            }
        }
        return out
    }
}
