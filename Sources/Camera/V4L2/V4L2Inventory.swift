/// What `ipcemu cameras` shows: every V4L2 node with its card, driver, formats, sizes and rates
/// (VIDIOC_QUERYCAP, ENUM_FMT, ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS).
public struct V4L2DeviceInfo: Sendable, Equatable {
    public var path: String
    public var capabilities: V4L2Capabilities?
    public var formats: [V4L2FormatInfo]
    /// Why the node could not be read (busy, permission), when it could not.
    public var error: String?

    public var isCapture: Bool { capabilities.map { $0.canCapture && $0.canStream } ?? false }
}

public enum V4L2Inventory {
    /// Reads every node the driver lists. Nodes that are not capture devices (metadata, output,
    /// codec nodes) are included with their capabilities and no formats.
    public static func scan(driver: V4L2Driver = .system) -> [V4L2DeviceInfo] {
        driver.listDevicePaths().map { path in
            do throws(V4L2Error) {
                let device = try V4L2Device.open(path, driver: driver)
                defer { device.close() }
                let caps = try device.capabilities()
                let formats = caps.canCapture ? device.formats().filter { !$0.isEmulated } : []
                return V4L2DeviceInfo(path: path, capabilities: caps, formats: formats, error: nil)
            } catch {
                return V4L2DeviceInfo(path: path, capabilities: nil, formats: [], error: error.description)
            }
        }
    }

    /// The listing as text, one device per block.
    public static func render(_ devices: [V4L2DeviceInfo], includeNonCapture: Bool = false) -> String {
        let shown = devices.filter { includeNonCapture || $0.isCapture || $0.error != nil }
        guard !shown.isEmpty else {
            if devices.isEmpty { return "No V4L2 devices (/dev/video* does not exist). Plug in a camera, or use --camera test-pattern.\n" }
            return "No V4L2 capture devices (\(devices.count) other V4L2 node(s); --all shows them). Use --camera test-pattern.\n"
        }
        var out = ""
        for device in shown {
            guard let caps = device.capabilities else {
                out += "\(device.path): \(device.error ?? "unreadable")\n"
                continue
            }
            out += "\(device.path): \"\(caps.card)\" (driver \(caps.driver), \(caps.busInfo))"
            out += device.isCapture ? "\n" : " not a capture device\n"
            for format in device.formats {
                let usable = format.pixelFormat.map { " -> \($0)" } ?? " (not usable by ipcemu)"
                out += "  \(format.fourccString) \(format.name)\(usable)\n"
                switch format.sizes {
                case .discrete(let sizes):
                    for size in sizes { out += "    \(size.width)x\(size.height) @ \(rates(size.rates))\n" }
                case .range(let minW, let maxW, let stepW, let minH, let maxH, let stepH, let r):
                    out += "    \(minW)x\(minH) to \(maxW)x\(maxH) (step \(stepW)x\(stepH)) @ \(rates(r))\n"
                case .unknown:
                    out += "    sizes not enumerated\n"
                }
            }
        }
        return out
    }

    static func rates(_ rates: V4L2FrameRates) -> String {
        switch rates {
        case .discrete(let list): return list.map { "\($0)" }.joined(separator: ", ") + " fps"
        case .range(let minInterval, let maxInterval): return "\(maxInterval)-\(minInterval) fps"
        case .unknown: return "? fps"
        }
    }
}
