import CV4L2

/// What VIDIOC_QUERYCAP says about a device node.
public struct V4L2Capabilities: Sendable, Equatable {
    public var card: String
    public var driver: String
    public var busInfo: String
    /// The capabilities of this node (device_caps when the driver reports them).
    public var deviceCaps: UInt32

    public var canCapture: Bool { deviceCaps & CV4L2_CAP_VIDEO_CAPTURE != 0 }
    public var canStream: Bool { deviceCaps & CV4L2_CAP_STREAMING != 0 }
}

/// A frame rate as V4L2 states it: a frame interval numerator/denominator seconds.
public struct V4L2Interval: Sendable, Equatable, CustomStringConvertible {
    public var numerator: UInt32
    public var denominator: UInt32
    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }
    public var fps: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }
    public var description: String {
        let f = fps
        return f == f.rounded() ? "\(Int(f))" : String(format2(f))
    }
}

/// The frame rates offered at one size.
public enum V4L2FrameRates: Sendable, Equatable {
    case discrete([V4L2Interval])
    /// A continuous or stepwise range of intervals (fps from `max` interval to `min` interval).
    case range(min: V4L2Interval, max: V4L2Interval)
    /// The driver does not enumerate intervals.
    case unknown

    func supports(fps: Double) -> Bool {
        switch self {
        case .discrete(let list): return list.contains { $0.fps >= fps * 0.95 }
        case .range(let minInterval, let maxInterval): return minInterval.fps >= fps * 0.95 && maxInterval.fps <= fps * 1.05
        case .unknown: return true
        }
    }

    var highest: Double? {
        switch self {
        case .discrete(let list): return list.map(\.fps).max()
        case .range(let minInterval, _): return minInterval.fps
        case .unknown: return nil
        }
    }
}

/// Frame sizes a format offers.
public enum V4L2FrameSizes: Sendable, Equatable {
    public struct Size: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var rates: V4L2FrameRates
        public init(width: Int, height: Int, rates: V4L2FrameRates) {
            self.width = width
            self.height = height
            self.rates = rates
        }
    }
    case discrete([Size])
    /// Stepwise or continuous; `rates` are those at the largest size.
    case range(minWidth: Int, maxWidth: Int, stepWidth: Int, minHeight: Int, maxHeight: Int, stepHeight: Int,
               rates: V4L2FrameRates)
    case unknown
}

/// One pixel format a device offers (VIDIOC_ENUM_FMT) with its sizes and rates.
public struct V4L2FormatInfo: Sendable, Equatable {
    public var fourcc: UInt32
    public var name: String
    public var flags: UInt32
    public var sizes: V4L2FrameSizes

    public init(fourcc: UInt32, name: String, flags: UInt32, sizes: V4L2FrameSizes) {
        self.fourcc = fourcc
        self.name = name
        self.flags = flags
        self.sizes = sizes
    }

    public var fourccString: String { fourCCString(fourcc) }
    /// Made by libv4l2 converting another format, not by the camera.
    public var isEmulated: Bool { flags & CV4L2_FMT_FLAG_EMULATED != 0 }
    public var pixelFormat: PixelFormat? { PixelFormat(v4l2FourCC: fourcc) }
}

/// An open V4L2 device node.
final class V4L2Device {
    let driver: V4L2Driver
    let path: String
    private(set) var fd: Int32

    private init(driver: V4L2Driver, path: String, fd: Int32) {
        self.driver = driver
        self.path = path
        self.fd = fd
    }

    static func open(_ path: String, driver: V4L2Driver) throws(V4L2Error) -> V4L2Device {
        let fd = driver.open(path)
        guard fd >= 0 else { throw V4L2Error.from(call: "open", device: path, result: fd) }
        return V4L2Device(driver: driver, path: path, fd: fd)
    }

    deinit { close() }

    func close() {
        if fd >= 0 {
            driver.close(fd)
            fd = -1
        }
    }

    /// ioctl that throws the mapped error.
    func call<T>(_ name: String, _ request: UInt, _ argument: inout T) throws(V4L2Error) {
        let r = driver.ioctl(fd, request, &argument)
        if r != 0 { throw V4L2Error.from(call: name, device: path, result: r) }
    }

    /// ioctl that returns -errno (for enumerations that end with EINVAL).
    func tryCall<T>(_ request: UInt, _ argument: inout T) -> Int32 {
        driver.ioctl(fd, request, &argument)
    }

    func capabilities() throws(V4L2Error) -> V4L2Capabilities {
        var cap = v4l2_capability()
        try call("VIDIOC_QUERYCAP", CV4L2_VIDIOC_QUERYCAP, &cap)
        let caps = cap.capabilities & CV4L2_CAP_DEVICE_CAPS != 0 ? cap.device_caps : cap.capabilities
        return V4L2Capabilities(
            card: cString(cap.card), driver: cString(cap.driver), busInfo: cString(cap.bus_info), deviceCaps: caps)
    }

    /// Every capture format with its sizes and frame rates.
    func formats() -> [V4L2FormatInfo] {
        var out: [V4L2FormatInfo] = []
        var index: UInt32 = 0
        while index < 64 {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            guard tryCall(CV4L2_VIDIOC_ENUM_FMT, &desc) == 0 else { break }
            out.append(V4L2FormatInfo(
                fourcc: desc.pixelformat, name: cString(desc.description), flags: desc.flags,
                sizes: frameSizes(desc.pixelformat)))
            index += 1
        }
        return out
    }

    func frameSizes(_ fourcc: UInt32) -> V4L2FrameSizes {
        var sizes: [V4L2FrameSizes.Size] = []
        var index: UInt32 = 0
        while index < 256 {
            var e = v4l2_frmsizeenum()
            e.index = index
            e.pixel_format = fourcc
            guard tryCall(CV4L2_VIDIOC_ENUM_FRAMESIZES, &e) == 0 else { break }
            if e.type == CV4L2_FRMSIZE_TYPE_DISCRETE {
                let w = Int(e.discrete.width), h = Int(e.discrete.height)
                sizes.append(.init(width: w, height: h, rates: frameRates(fourcc, width: w, height: h)))
            } else {
                let s = e.stepwise
                let continuous = e.type == CV4L2_FRMSIZE_TYPE_CONTINUOUS
                return .range(
                    minWidth: Int(s.min_width), maxWidth: Int(s.max_width),
                    stepWidth: continuous ? 1 : max(1, Int(s.step_width)),
                    minHeight: Int(s.min_height), maxHeight: Int(s.max_height),
                    stepHeight: continuous ? 1 : max(1, Int(s.step_height)),
                    rates: frameRates(fourcc, width: Int(s.max_width), height: Int(s.max_height)))
            }
            index += 1
        }
        return sizes.isEmpty ? .unknown : .discrete(sizes)
    }

    func frameRates(_ fourcc: UInt32, width: Int, height: Int) -> V4L2FrameRates {
        var list: [V4L2Interval] = []
        var index: UInt32 = 0
        while index < 256 {
            var e = v4l2_frmivalenum()
            e.index = index
            e.pixel_format = fourcc
            e.width = UInt32(width)
            e.height = UInt32(height)
            guard tryCall(CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, &e) == 0 else { break }
            if e.type == CV4L2_FRMIVAL_TYPE_DISCRETE {
                list.append(V4L2Interval(numerator: e.discrete.numerator, denominator: e.discrete.denominator))
            } else {
                let s = e.stepwise
                return .range(min: V4L2Interval(numerator: s.min.numerator, denominator: s.min.denominator),
                              max: V4L2Interval(numerator: s.max.numerator, denominator: s.max.denominator))
            }
            index += 1
        }
        return list.isEmpty ? .unknown : .discrete(list)
    }
}

/// Camera controls (VIDIOC_G_CTRL / VIDIOC_S_CTRL): exposure, brightness, or a driver's own
/// (vivid's "Disconnect" button emulates an unplug, which the integration test uses).
public enum V4L2Control {
    /// Sets control `id` on the device at `path` (opened just for this, then closed).
    public static func set(device path: String, id: UInt32, value: Int32, driver: V4L2Driver = .system) throws(V4L2Error) {
        let device = try V4L2Device.open(path, driver: driver)
        defer { device.close() }
        var control = v4l2_control(id: id, value: value)
        try device.call("VIDIOC_S_CTRL", CV4L2_VIDIOC_S_CTRL, &control)
    }

    /// Reads control `id`.
    public static func get(device path: String, id: UInt32, driver: V4L2Driver = .system) throws(V4L2Error) -> Int32 {
        let device = try V4L2Device.open(path, driver: driver)
        defer { device.close() }
        var control = v4l2_control(id: id, value: 0)
        try device.call("VIDIOC_G_CTRL", CV4L2_VIDIOC_G_CTRL, &control)
        return control.value
    }
}

/// A fixed-size C char array (imported as a tuple) as a String.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

func format2(_ value: Double) -> String {
    let scaled = (value * 100).rounded() / 100
    return String(scaled)
}
