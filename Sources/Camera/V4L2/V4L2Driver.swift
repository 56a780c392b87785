import CV4L2
import Foundation

/// The device operations the V4L2 source uses: a `cv4l2_driver` table (libv4l2 for real, a fake
/// camera in tests) and how to find candidate device nodes. Every call returns 0 (or a file
/// descriptor) or -errno.
// @unchecked: `cv4l2_driver` is a C table of function pointers (stateless, never mutated after setup).
public struct V4L2Driver: @unchecked Sendable {
    public var table: cv4l2_driver
    /// The device nodes to scan when a camera is named rather than given by path.
    public var listDevicePaths: @Sendable () -> [String]

    public init(table: cv4l2_driver, listDevicePaths: @escaping @Sendable () -> [String]) {
        self.table = table
        self.listDevicePaths = listDevicePaths
    }

    /// libv4l2 over the kernel, scanning /dev/video*.
    public static var system: V4L2Driver {
        V4L2Driver(table: cv4l2_libv4l2_driver(), listDevicePaths: { systemVideoNodes() })
    }

    /// /dev/video0, /dev/video1, ... in numeric order.
    public static func systemVideoNodes(directory: String = "/dev") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names
            .filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
            .map { directory + "/" + $0 }
    }

    func open(_ path: String) -> Int32 {
        guard let f = table.open_device else { return -ENOSYS }
        return path.withCString { f(table.context, $0) }
    }

    func close(_ fd: Int32) {
        _ = table.close_device?(table.context, fd)
    }

    func ioctl<T>(_ fd: Int32, _ request: UInt, _ argument: inout T) -> Int32 {
        guard let f = table.ioctl else { return -ENOSYS }
        return withUnsafeMutablePointer(to: &argument) { f(table.context, fd, request, $0) }
    }

    func map(_ fd: Int32, length: Int, offset: Int64) -> (UnsafeMutableRawPointer?, Int32) {
        guard let f = table.map_buffer else { return (nil, -ENOSYS) }
        var out: UnsafeMutableRawPointer?
        let r = f(table.context, fd, length, offset, &out)
        return (r == 0 ? out : nil, r)
    }

    func unmap(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = table.unmap_buffer?(table.context, address, length)
    }

    func waitReadable(_ fd: Int32, timeoutMs: Int32) -> Int32 {
        guard let f = table.wait_readable else { return -ENOSYS }
        return f(table.context, fd, timeoutMs)
    }
}

/// What went wrong with a V4L2 camera, in words an operator can act on.
public enum V4L2Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such device node, or no capture device with that card name.
    case notFound(String)
    /// Another program holds the camera (EBUSY).
    case busy(String)
    /// The camera went away (ENODEV), typically unplugged mid-stream.
    case unplugged(String)
    case notACaptureDevice(String)
    /// The camera offers none of the formats the source can use; the ones it does offer.
    case noUsableFormat(String, offered: [String])
    /// No frame arrived for a while although the stream was on.
    case stalled(String, seconds: Int)
    /// Any other failing call: which, on what, and errno.
    case system(call: String, device: String, errno: Int32)

    public var description: String {
        switch self {
        case .notFound(let what): return "no camera at \(what)"
        case .busy(let path): return "\(path) is busy (another program is using the camera)"
        case .unplugged(let path): return "\(path) went away (camera unplugged?)"
        case .notACaptureDevice(let path): return "\(path) is not a video capture device"
        case .noUsableFormat(let path, let offered):
            return "\(path) offers no usable format (offered: \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))"
        case .stalled(let path, let seconds): return "\(path) delivered no frame for \(seconds) s"
        case .system(let call, let device, let code):
            return "\(call) on \(device) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// Maps a failed call's -errno to the error a user should see.
    static func from(call: String, device: String, result: Int32) -> V4L2Error {
        let code = -result
        switch code {
        case ENOENT, ENXIO: return .notFound(device)
        case EBUSY: return .busy(device)
        case ENODEV: return .unplugged(device)
        default: return .system(call: call, device: device, errno: code)
        }
    }
}

/// A four-character code as text ("YUYV", "MJPG").
public func fourCCString(_ code: UInt32) -> String {
    let bytes = (0..<4).map { UInt8((code >> (8 * UInt32($0))) & 0xff) }
    return String(decoding: bytes.map { $0 >= 32 && $0 < 127 ? $0 : 46 }, as: UTF8.self)
        .trimmingCharacters(in: .whitespaces)
}

/// Builds a four-character code from text.
public func fourCC(_ text: String) -> UInt32 {
    var code: UInt32 = 0
    for (i, byte) in text.utf8.prefix(4).enumerated() { code |= UInt32(byte) << (8 * UInt32(i)) }
    return code
}

extension PixelFormat {
    /// The V4L2 pixel format this maps to (MJPEG also arrives as "JPEG").
    public var v4l2FourCC: UInt32 {
        switch self {
        case .i420: return CV4L2_PIX_FMT_YUV420
        case .nv12: return CV4L2_PIX_FMT_NV12
        case .yuyv: return CV4L2_PIX_FMT_YUYV
        case .mjpeg: return CV4L2_PIX_FMT_MJPEG
        case .h264: return CV4L2_PIX_FMT_H264
        case .h265: return CV4L2_PIX_FMT_HEVC
        }
    }

    public init?(v4l2FourCC code: UInt32) {
        switch code {
        case CV4L2_PIX_FMT_YUV420: self = .i420
        case CV4L2_PIX_FMT_NV12: self = .nv12
        case CV4L2_PIX_FMT_YUYV: self = .yuyv
        case CV4L2_PIX_FMT_MJPEG, CV4L2_PIX_FMT_JPEG: self = .mjpeg
        case CV4L2_PIX_FMT_H264: self = .h264
        case CV4L2_PIX_FMT_HEVC: self = .h265
        default: return nil
        }
    }
}
