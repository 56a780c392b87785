import CV4L2
import Camera
import TestSupport
import Foundation

/// A fake camera driver behind the injectable `cv4l2_driver` table: cameras that can be made
/// busy, unplugged and plugged back, offering chosen formats, with every streaming ioctl logged.
public final class FakeV4L2: @unchecked Sendable {
    public struct Offer {
        public var fourcc: UInt32
        public var sizes: [(Int, Int)]
        public var fps: [UInt32] = [30, 15]

        public init(fourcc: UInt32, sizes: [(Int, Int)], fps: [UInt32] = [30, 15]) {
            self.fourcc = fourcc
            self.sizes = sizes
            self.fps = fps
        }
    }

    public final class Camera {
        public let path: String
        public let card: String
        public var offers: [Offer]
        public var present = true
        public var busy = false
        public var framesPerSecond: Double = 200
        /// Driver sequence numbers to skip (frames the "hardware" dropped).
        public var dropSequences: Set<UInt32> = []
        /// When not empty, what a compressed camera delivers: buffer n holds `payloads[n % count]`
        /// (cut to the buffer's length), e.g. real x265 access units for an HEVC camera. The driver
        /// sets no key-frame flag on them.
        public var payloads: [[UInt8]] = []
        // Streaming state (per camera; one opener at a time is enough here).
        public var format: (fourcc: UInt32, width: Int, height: Int) = (0, 0, 0)
        public var buffers: [(memory: UnsafeMutableRawPointer, length: Int)] = []
        public var queued: [UInt32] = []
        public var streaming = false
        public var sequence: UInt32 = 0
        public var lastFrameNs: UInt64 = 0
        public var log: [String] = []

        public init(path: String, card: String, offers: [Offer]) {
            self.path = path
            self.card = card
            self.offers = offers
        }
    }

    private let lock = NSLock()
    private var cameras: [Camera]
    private var fds: [Int32: Camera] = [:]
    private var nextFD: Int32 = 100
    public private(set) var mappedCount = 0
    private var attempts = 0

    public init(_ cameras: [Camera]) { self.cameras = cameras }

    public var openCount: Int { locked { fds.count } }
    /// Every `open` so far, those refused included (a retry that found no camera counts).
    public var openAttempts: Int { locked { attempts } }
    public var mapped: Int { locked { mappedCount } }

    public func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    public func camera(_ path: String) -> Camera? { cameras.first { $0.path == path } }

    /// Unplug: open devices fail with ENODEV, new opens with ENOENT.
    public func unplug(_ path: String) { locked { camera(path)?.present = false } }
    public func plug(_ path: String) { locked { camera(path)?.present = true } }
    public func setBusy(_ path: String, _ busy: Bool) { locked { camera(path)?.busy = busy } }
    public func log(_ path: String) -> [String] { locked { camera(path)?.log ?? [] } }

    /// The driver table the source calls. The driver holds `self`: a capture thread that outlives
    /// its test (a bug the test reports) calls a live fake, not freed memory.
    public var driver: V4L2Driver {
        var table = cv4l2_driver()
        table.context = Unmanaged.passUnretained(self).toOpaque()
        table.open_device = fakeOpen
        table.close_device = fakeClose
        table.ioctl = fakeIoctl
        table.map_buffer = fakeMap
        table.unmap_buffer = fakeUnmap
        table.wait_readable = fakeWait
        let paths = cameras.map(\.path)
        return V4L2Driver(table: table, listDevicePaths: { withExtendedLifetime(self) { paths } })
    }

    // MARK: Driver entry points (called with no lock held)

    public func open(_ path: String) -> Int32 {
        locked {
            attempts += 1
            guard let cam = camera(path), cam.present else { return -ENOENT }
            if cam.busy { return -EBUSY }
            let fd = nextFD
            nextFD += 1
            fds[fd] = cam
            return fd
        }
    }

    public func close(_ fd: Int32) -> Int32 {
        locked {
            guard let cam = fds.removeValue(forKey: fd) else { return -EBADF }
            cam.streaming = false
            cam.queued = []
            return 0
        }
    }

    public func map(_ fd: Int32, length: Int, offset: Int64, out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
        locked {
            guard let cam = fds[fd] else { return -EBADF }
            guard cam.present else { return -ENODEV }
            let index = Int(offset / 0x100000)
            guard index < cam.buffers.count, length <= cam.buffers[index].length else { return -EINVAL }
            out?.pointee = cam.buffers[index].memory
            mappedCount += 1
            return 0
        }
    }

    public func unmap(_ address: UnsafeMutableRawPointer?) -> Int32 {
        locked {
            mappedCount -= 1
            return 0
        }
    }

    public func wait(_ fd: Int32, timeoutMs: Int32) -> Int32 {
        let (cam, state): (Camera?, Int32) = locked {
            guard let cam = fds[fd] else { return (nil, -EBADF) }
            if !cam.present { return (cam, 2) }
            if !cam.streaming || cam.queued.isEmpty { return (cam, 2) }
            return (cam, 1)
        }
        guard state == 1, let cam else { return state }
        // Pace frames at the camera's rate.
        let period = UInt64(1e9 / locked { cam.framesPerSecond })
        let due = locked { cam.lastFrameNs } + period
        let now = Clocks.monotonicNs()
        if due > now {
            let waitNs = min(due - now, UInt64(max(0, timeoutMs)) * 1_000_000)
            usleep(UInt32(waitNs / 1000))
            if Clocks.monotonicNs() < due { return 0 }
        }
        return locked { cam.present ? 1 : 2 }
    }

    public func ioctl(_ fd: Int32, _ request: UInt, _ arg: UnsafeMutableRawPointer?) -> Int32 {
        locked {
            guard let cam = fds[fd], let arg else { return -EBADF }
            guard cam.present else { return -ENODEV }
            switch request {
            case CV4L2_VIDIOC_QUERYCAP:
                let cap = arg.assumingMemoryBound(to: v4l2_capability.self)
                cap.pointee = v4l2_capability()
                setCString(&cap.pointee.card, cam.card)
                setCString(&cap.pointee.driver, "fake")
                setCString(&cap.pointee.bus_info, "fake:\(cam.path)")
                cap.pointee.capabilities = CV4L2_CAP_VIDEO_CAPTURE | CV4L2_CAP_STREAMING | CV4L2_CAP_DEVICE_CAPS
                cap.pointee.device_caps = CV4L2_CAP_VIDEO_CAPTURE | CV4L2_CAP_STREAMING
                return 0
            case CV4L2_VIDIOC_ENUM_FMT:
                let d = arg.assumingMemoryBound(to: v4l2_fmtdesc.self)
                let i = Int(d.pointee.index)
                guard i < cam.offers.count else { return -EINVAL }
                d.pointee.pixelformat = cam.offers[i].fourcc
                let compressed = [CV4L2_PIX_FMT_MJPEG, CV4L2_PIX_FMT_H264, CV4L2_PIX_FMT_HEVC].contains(cam.offers[i].fourcc)
                d.pointee.flags = compressed ? CV4L2_FMT_FLAG_COMPRESSED : 0
                setCString(&d.pointee.description, "fake \(fourCCString(cam.offers[i].fourcc))")
                return 0
            case CV4L2_VIDIOC_ENUM_FRAMESIZES:
                let e = arg.assumingMemoryBound(to: v4l2_frmsizeenum.self)
                guard let offer = cam.offers.first(where: { $0.fourcc == e.pointee.pixel_format }),
                      Int(e.pointee.index) < offer.sizes.count else { return -EINVAL }
                let (w, h) = offer.sizes[Int(e.pointee.index)]
                e.pointee.type = CV4L2_FRMSIZE_TYPE_DISCRETE
                e.pointee.discrete.width = UInt32(w)
                e.pointee.discrete.height = UInt32(h)
                return 0
            case CV4L2_VIDIOC_ENUM_FRAMEINTERVALS:
                let e = arg.assumingMemoryBound(to: v4l2_frmivalenum.self)
                guard let offer = cam.offers.first(where: { $0.fourcc == e.pointee.pixel_format }),
                      offer.sizes.contains(where: { $0.0 == Int(e.pointee.width) && $0.1 == Int(e.pointee.height) }),
                      Int(e.pointee.index) < offer.fps.count else { return -EINVAL }
                e.pointee.type = CV4L2_FRMIVAL_TYPE_DISCRETE
                e.pointee.discrete.numerator = 1
                e.pointee.discrete.denominator = offer.fps[Int(e.pointee.index)]
                return 0
            case CV4L2_VIDIOC_S_FMT:
                let f = arg.assumingMemoryBound(to: v4l2_format.self)
                let offer = cam.offers.first { $0.fourcc == f.pointee.fmt.pix.pixelformat } ?? cam.offers[0]
                let want = (Int(f.pointee.fmt.pix.width), Int(f.pointee.fmt.pix.height))
                let size = offer.sizes.min { abs($0.0 - want.0) + abs($0.1 - want.1) < abs($1.0 - want.0) + abs($1.1 - want.1) } ?? (640, 480)
                cam.format = (offer.fourcc, size.0, size.1)
                f.pointee.fmt.pix.pixelformat = offer.fourcc
                f.pointee.fmt.pix.width = UInt32(size.0)
                f.pointee.fmt.pix.height = UInt32(size.1)
                f.pointee.fmt.pix.bytesperline = offer.fourcc == CV4L2_PIX_FMT_YUYV ? UInt32(2 * size.0) : 0
                f.pointee.fmt.pix.sizeimage = UInt32(2 * size.0 * size.1)
                cam.log.append("S_FMT \(fourCCString(offer.fourcc)) \(size.0)x\(size.1)")
                return 0
            case CV4L2_VIDIOC_S_PARM:
                let p = arg.assumingMemoryBound(to: v4l2_streamparm.self)
                p.pointee.parm.capture.capability = CV4L2_CAP_TIMEPERFRAME
                return 0
            case CV4L2_VIDIOC_REQBUFS:
                let r = arg.assumingMemoryBound(to: v4l2_requestbuffers.self)
                for b in cam.buffers { b.memory.deallocate() }
                cam.buffers = []
                cam.queued = []
                let count = min(Int(r.pointee.count), 8)
                let length = 2 * cam.format.width * cam.format.height
                for _ in 0..<count {
                    cam.buffers.append((UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 64), length))
                }
                r.pointee.count = UInt32(count)
                cam.log.append("REQBUFS \(count)")
                return 0
            case CV4L2_VIDIOC_QUERYBUF:
                let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
                let i = Int(b.pointee.index)
                guard i < cam.buffers.count else { return -EINVAL }
                b.pointee.length = UInt32(cam.buffers[i].length)
                b.pointee.m.offset = UInt32(i * 0x100000)
                return 0
            case CV4L2_VIDIOC_QBUF:
                let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
                guard Int(b.pointee.index) < cam.buffers.count, !cam.queued.contains(b.pointee.index) else { return -EINVAL }
                cam.queued.append(b.pointee.index)
                cam.log.append("QBUF \(b.pointee.index)")
                return 0
            case CV4L2_VIDIOC_DQBUF:
                let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
                guard cam.streaming, !cam.queued.isEmpty else { return -EAGAIN }
                while cam.dropSequences.contains(cam.sequence) { cam.sequence += 1 }
                let index = cam.queued.removeFirst()
                let used = fill(cam, index: Int(index))
                b.pointee.index = index
                b.pointee.bytesused = UInt32(used)
                b.pointee.sequence = cam.sequence
                b.pointee.flags = CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC
                if cam.format.fourcc == CV4L2_PIX_FMT_H264, cam.sequence % 10 == 0 { b.pointee.flags |= CV4L2_BUF_FLAG_KEYFRAME }
                let now = Clocks.monotonicNs()
                b.pointee.timestamp.tv_sec = Int(now / 1_000_000_000)
                b.pointee.timestamp.tv_usec = Int((now % 1_000_000_000) / 1000)
                cam.lastFrameNs = now
                cam.sequence += 1
                cam.log.append("DQBUF \(index)")
                return 0
            case CV4L2_VIDIOC_STREAMON:
                cam.streaming = true
                cam.lastFrameNs = Clocks.monotonicNs()
                cam.log.append("STREAMON")
                return 0
            case CV4L2_VIDIOC_STREAMOFF:
                cam.streaming = false
                cam.queued = []
                cam.log.append("STREAMOFF")
                return 0
            default:
                return -ENOTTY
            }
        }
    }

    /// Writes a recognisable frame: YUYV filled with the sequence number's low byte, MJPEG a tiny
    /// fake JPEG, H.264 a fake access unit. Returns bytesused.
    private func fill(_ cam: Camera, index: Int) -> Int {
        let memory = cam.buffers[index].memory.assumingMemoryBound(to: UInt8.self)
        if !cam.payloads.isEmpty {
            let payload = cam.payloads[Int(cam.sequence % UInt32(cam.payloads.count))]
            let count = min(payload.count, cam.buffers[index].length)
            memory.update(from: payload, count: count)
            return count
        }
        switch cam.format.fourcc {
        case CV4L2_PIX_FMT_MJPEG:
            let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, UInt8(cam.sequence & 0xff), 0xFF, 0xD9]
            memory.update(from: bytes, count: bytes.count)
            return bytes.count
        case CV4L2_PIX_FMT_H264:
            let nal: UInt8 = cam.sequence % 10 == 0 ? 0x65 : 0x41
            let bytes: [UInt8] = [0, 0, 0, 1, nal, 0x88, UInt8(cam.sequence & 0xff)]
            memory.update(from: bytes, count: bytes.count)
            return bytes.count
        default:
            let size = 2 * cam.format.width * cam.format.height
            memory.update(repeating: UInt8(cam.sequence & 0xff), count: size)
            return size
        }
    }
}

private func setCString<T>(_ field: inout T, _ text: String) {
    withUnsafeMutableBytes(of: &field) { raw in
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        for (i, byte) in text.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
    }
}

private func fake(_ context: UnsafeMutableRawPointer?) -> FakeV4L2? {
    context.map { Unmanaged<FakeV4L2>.fromOpaque($0).takeUnretainedValue() }
}

private func fakeOpen(_ context: UnsafeMutableRawPointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    guard let f = fake(context), let path else { return -EINVAL }
    return f.open(String(cString: path))
}

private func fakeClose(_ context: UnsafeMutableRawPointer?, _ fd: Int32) -> Int32 {
    fake(context)?.close(fd) ?? -EINVAL
}

private func fakeIoctl(_ context: UnsafeMutableRawPointer?, _ fd: Int32, _ request: UInt, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    fake(context)?.ioctl(fd, request, arg) ?? -EINVAL
}

private func fakeMap(
    _ context: UnsafeMutableRawPointer?, _ fd: Int32, _ length: Int, _ offset: Int64,
    _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int32 {
    fake(context)?.map(fd, length: length, offset: offset, out: out) ?? -EINVAL
}

private func fakeUnmap(_ context: UnsafeMutableRawPointer?, _ address: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    fake(context)?.unmap(address) ?? -EINVAL
}

private func fakeWait(_ context: UnsafeMutableRawPointer?, _ fd: Int32, _ timeoutMs: Int32) -> Int32 {
    fake(context)?.wait(fd, timeoutMs: timeoutMs) ?? -EINVAL
}

/// Collects a source's events and waits for conditions on them.
public final class EventRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    public private(set) var events: [FrameSourceEvent] = []

    public init() {}

    public var sink: @Sendable (FrameSourceEvent) -> Void {
        { [self] event in
            condition.lock()
            events.append(event)
            condition.broadcast()
            condition.unlock()
        }
    }

    public var frames: [Frame] {
        condition.lock()
        defer { condition.unlock() }
        return events.compactMap { if case .frame(let f) = $0 { return f } else { return nil } }
    }

    public var statuses: [FrameSourceStatus] {
        condition.lock()
        defer { condition.unlock() }
        return events.compactMap { if case .status(let s) = $0 { return s } else { return nil } }
    }

    /// Waits until `predicate` holds over the events so far; false on timeout. The wait blocks a
    /// thread of its own (`offThePool`), never one of Swift's cooperative threads.
    @discardableResult
    public func wait(seconds: Double = 10, until predicate: @escaping @Sendable ([FrameSourceEvent]) -> Bool) async -> Bool {
        await offThePool { self.waitBlocking(seconds: seconds, until: predicate) }
    }

    private func waitBlocking(seconds: Double, until predicate: ([FrameSourceEvent]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(events) {
            if !condition.wait(until: deadline) { return predicate(events) }
        }
        return true
    }

    public func waitForFrames(_ count: Int, seconds: Double = 10) async -> Bool {
        await wait(seconds: seconds) { events in events.filter { if case .frame = $0 { return true } else { return false } }.count >= count }
    }

    /// Frames counted after the n-th status event.
    public func framesAfterStatus(_ n: Int) -> [Frame] {
        condition.lock()
        defer { condition.unlock() }
        var seen = 0
        var out: [Frame] = []
        for e in events {
            switch e {
            case .status: seen += 1
            case .frame(let f): if seen > n { out.append(f) }
            }
        }
        return out
    }
}
