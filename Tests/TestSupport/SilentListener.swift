#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that never accepts and never answers: the kernel completes the
/// handshake, so a client connects and then waits forever for CONNACK. For timeout tests.
public final class SilentListener: @unchecked Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        (fd, port) = try Self.makeListeningSocket()
    }

    /// A listening TCP socket on 127.0.0.1 at a port the kernel picks.
    static func makeListeningSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SilentListenerError(step: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(fd)
            throw SilentListenerError(step: "bind/listen", code: code)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    deinit { close(fd) }
}

public struct SilentListenerError: Error, CustomStringConvertible {
    public let step: String
    public let code: Int32
    public var description: String { "silent listener \(step): errno \(code)" }
}
