import CV4L2
#if canImport(Glibc)
import Glibc
#endif

/// A streaming capture on an open device: S_FMT, S_PARM, REQBUFS with mmap buffers, all queued,
/// STREAMON; then one DQBUF, copy, QBUF per frame.
final class V4L2Stream {
    let device: V4L2Device
    let format: PixelFormat
    let width: Int
    let height: Int
    let bytesPerLine: Int
    let fps: Double
    private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    private var streaming = false

    /// The format the driver actually set, as text ("YUYV 640x360@30").
    var summary: String { "\(format) \(width)x\(height)@\(formatFPS(fps))" }

    init(device: V4L2Device, choice: V4L2Negotiation.Choice, bufferCount: Int) throws(V4L2Error) {
        self.device = device
        var f = v4l2_format()
        f.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        f.fmt.pix.width = UInt32(choice.width)
        f.fmt.pix.height = UInt32(choice.height)
        f.fmt.pix.pixelformat = choice.fourcc
        f.fmt.pix.field = CV4L2_FIELD_ANY
        try device.call("VIDIOC_S_FMT", CV4L2_VIDIOC_S_FMT, &f)
        guard let actual = PixelFormat(v4l2FourCC: f.fmt.pix.pixelformat) else {
            throw .noUsableFormat(device.path, offered: [fourCCString(f.fmt.pix.pixelformat)])
        }
        format = actual
        width = Int(f.fmt.pix.width)
        height = Int(f.fmt.pix.height)
        let minimumLine = actual == .yuyv ? 2 * width : width
        bytesPerLine = max(Int(f.fmt.pix.bytesperline), actual.isCompressed ? 0 : minimumLine)

        // Frame rate: best effort (not every driver supports S_PARM).
        var parm = v4l2_streamparm()
        parm.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        parm.parm.capture.timeperframe.numerator = 1000
        parm.parm.capture.timeperframe.denominator = UInt32((choice.fps * 1000).rounded())
        if device.tryCall(CV4L2_VIDIOC_S_PARM, &parm) == 0, parm.parm.capture.timeperframe.numerator > 0 {
            fps = Double(parm.parm.capture.timeperframe.denominator) / Double(parm.parm.capture.timeperframe.numerator)
        } else {
            fps = choice.fps
        }

        var req = v4l2_requestbuffers()
        req.count = UInt32(bufferCount)
        req.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        req.memory = CV4L2_MEMORY_MMAP
        try device.call("VIDIOC_REQBUFS", CV4L2_VIDIOC_REQBUFS, &req)
        guard req.count >= 2 else {
            throw .system(call: "VIDIOC_REQBUFS (got \(req.count) buffers)", device: device.path, errno: ENOMEM)
        }
        do throws(V4L2Error) {
            for index in 0..<req.count {
                var b = v4l2_buffer()
                b.index = index
                b.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
                b.memory = CV4L2_MEMORY_MMAP
                try device.call("VIDIOC_QUERYBUF", CV4L2_VIDIOC_QUERYBUF, &b)
                let (address, result) = device.driver.map(device.fd, length: Int(b.length), offset: Int64(b.m.offset))
                guard let address else { throw V4L2Error.from(call: "mmap", device: device.path, result: result) }
                buffers.append((address, Int(b.length)))
            }
            for index in 0..<buffers.count { try queue(UInt32(index)) }
            var type = Int32(bitPattern: CV4L2_BUF_TYPE_VIDEO_CAPTURE)
            try device.call("VIDIOC_STREAMON", CV4L2_VIDIOC_STREAMON, &type)
            streaming = true
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    var bufferCount: Int { buffers.count }

    private func queue(_ index: UInt32) throws(V4L2Error) {
        var b = v4l2_buffer()
        b.index = index
        b.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        b.memory = CV4L2_MEMORY_MMAP
        try device.call("VIDIOC_QBUF", CV4L2_VIDIOC_QBUF, &b)
    }

    /// A dequeued frame's bytes (tightly packed) and the driver's metadata.
    struct Captured {
        var bytes: [UInt8]
        var driverSequence: UInt32
        /// Monotonic nanoseconds of capture, or nil when the driver did not stamp it.
        var monotonicNs: UInt64?
        var isKeyFrame: Bool
    }

    /// Waits up to `timeoutMs` for a frame. nil on timeout (or a buffer the driver marked bad).
    func next(timeoutMs: Int32) throws(V4L2Error) -> Captured? {
        let ready = device.driver.waitReadable(device.fd, timeoutMs: timeoutMs)
        if ready < 0 { throw V4L2Error.from(call: "poll", device: device.path, result: ready) }
        if ready == 0 { return nil }
        var b = v4l2_buffer()
        b.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        b.memory = CV4L2_MEMORY_MMAP
        let r = device.tryCall(CV4L2_VIDIOC_DQBUF, &b)
        if r == -EAGAIN {
            // poll flagged an error but nothing is ready: the stream is broken.
            if ready == 2 { throw .unplugged(device.path) }
            return nil
        }
        if r != 0 { throw V4L2Error.from(call: "VIDIOC_DQBUF", device: device.path, result: r) }
        let index = Int(b.index)
        guard index < buffers.count else {
            throw .system(call: "VIDIOC_DQBUF (index \(index) out of range)", device: device.path, errno: EINVAL)
        }
        defer { _ = try? queue(b.index) }
        if b.flags & CV4L2_BUF_FLAG_ERROR != 0 { return nil }
        let used = min(Int(b.bytesused), buffers[index].length)
        if let expected = format.rawFrameSize(width: width, height: height),
           used < (bytesPerLine == (format == .yuyv ? 2 * width : width) ? expected : bytesPerLine * height) {
            return nil  // a short raw frame: damaged, not worth passing on
        }
        if used == 0 { return nil }
        let bytes = pack(buffers[index].address, used: used)
        var mono: UInt64?
        let ts = b.timestamp
        if b.flags & CV4L2_BUF_FLAG_TIMESTAMP_MASK == CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, ts.tv_sec > 0 || ts.tv_usec > 0 {
            mono = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_usec) * 1000
        }
        // Raw and JPEG frames are all key frames; H.264 and H.265 are read again from their NAL units.
        let key = !(format == .h264 || format == .h265) || b.flags & CV4L2_BUF_FLAG_KEYFRAME != 0
        return Captured(bytes: bytes, driverSequence: b.sequence, monotonicNs: mono, isKeyFrame: key)
    }

    /// Copies a buffer, dropping row padding from raw formats.
    private func pack(_ address: UnsafeMutableRawPointer, used: Int) -> [UInt8] {
        let src = UnsafeRawBufferPointer(start: address, count: used)
        guard !format.isCompressed else { return Array(src) }
        let rowBytes = format == .yuyv ? 2 * width : width
        guard bytesPerLine != rowBytes else { return Array(src.prefix(format.rawFrameSize(width: width, height: height) ?? used)) }
        // Padded rows: repack plane by plane (chroma rows of planar formats are half as long).
        var out = [UInt8]()
        out.reserveCapacity(format.rawFrameSize(width: width, height: height) ?? used)
        func copyPlane(offset: Int, rows: Int, stride: Int, bytes: Int) {
            for row in 0..<rows {
                let start = offset + row * stride
                guard start + bytes <= src.count else { return }
                out.append(contentsOf: src[start..<(start + bytes)])
            }
        }
        let ch = (height + 1) / 2, cw = (width + 1) / 2
        switch format {
        case .yuyv:
            copyPlane(offset: 0, rows: height, stride: bytesPerLine, bytes: 2 * width)
        case .i420:
            copyPlane(offset: 0, rows: height, stride: bytesPerLine, bytes: width)
            let cStride = bytesPerLine / 2
            copyPlane(offset: bytesPerLine * height, rows: ch, stride: cStride, bytes: cw)
            copyPlane(offset: bytesPerLine * height + cStride * ch, rows: ch, stride: cStride, bytes: cw)
        case .nv12:
            copyPlane(offset: 0, rows: height, stride: bytesPerLine, bytes: width)
            copyPlane(offset: bytesPerLine * height, rows: ch, stride: bytesPerLine, bytes: 2 * cw)
        case .mjpeg, .h264, .h265:
            break
        }
        return out
    }

    /// STREAMOFF, unmap, free the buffers. Errors are ignored: the device may be gone already.
    func close() {
        if streaming {
            var type = Int32(bitPattern: CV4L2_BUF_TYPE_VIDEO_CAPTURE)
            _ = device.tryCall(CV4L2_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        for buffer in buffers { device.driver.unmap(buffer.address, length: buffer.length) }
        if !buffers.isEmpty {
            buffers.removeAll()
            var req = v4l2_requestbuffers()
            req.count = 0
            req.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            req.memory = CV4L2_MEMORY_MMAP
            _ = device.tryCall(CV4L2_VIDIOC_REQBUFS, &req)
        }
    }
}
