#if canImport(Glibc)
import Glibc
#endif

/// Unix domain socket helpers for private brokers that listen on socket files.
public enum UnixSocketProbe {
    /// Whether something accepts connections on the Unix socket at `path` right now (a blocking
    /// connect, closed at once). False for a path too long for a socket address.
    public static func isAccepting(path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard var address = address(path: path) else { return false }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return connected == 0
    }

    /// The socket address of `path`, or nil when it does not fit `sun_path` with its NUL.
    static func address(path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        return address
    }
}
