#if canImport(Glibc)
import Glibc
#endif

/// Loopback TCP helpers for starting private brokers.
public enum LoopbackPort {
    /// A TCP port on 127.0.0.1 that was free a moment ago: bound with port 0, read back, closed.
    /// Another process may take it before you bind it, so callers retry on "address in use".
    public static func free() throws(MosquittoBrokerError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .system("socket: \(errnoDescription(errno))") }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw .system("bind 127.0.0.1:0: \(errnoDescription(errno))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw .system("getsockname: \(errnoDescription(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on `host`:`port` right now (IPv4 literal host).
    public static func isAccepting(port: Int, host: String = "127.0.0.1") -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        if host != "127.0.0.1", host != "0.0.0.0" {
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return false }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return connected == 0
    }

    static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(clamping: port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
