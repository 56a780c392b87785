import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the server, for what an HTTP client library hides: a client that
/// sends nothing (idle timeout), holds a connection (connection cap), or stops reading (the event
/// stream's bounded buffer). Blocking calls with a receive timeout; used from test tasks only.
final class RawConnection: @unchecked Sendable {
    let fd: Int32
    private(set) var received: [UInt8] = []

    /// `receiveBuffer`: a small SO_RCVBUF makes a reader that stops reading fill up quickly.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawConnectionError.failed("socket") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            Glibc.close(fd)
            throw RawConnectionError.failed("connect")
        }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawConnectionError.failed("send") }
            sent += n
        }
    }

    enum ReadResult: Equatable { case data, closed, timedOut }

    /// Waits up to `timeout` for bytes (appended to `received`) or the peer's close.
    func read(timeout: Double) -> ReadResult {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return .timedOut }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return .closed }
        received += buffer[0..<n]
        return .data
    }

    /// Reads until the peer closes (true) or `timeout` passes with the connection open (false).
    func waitForClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if read(timeout: max(0.01, deadline.timeIntervalSinceNow)) == .closed { return true }
        }
        return false
    }

    /// Reads until `text` appears in what was received, or `timeout`.
    func waitFor(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if receivedText.contains(text) { return true }
            if read(timeout: max(0.01, deadline.timeIntervalSinceNow)) == .closed { break }
        }
        return receivedText.contains(text)
    }

    var receivedText: String { String(decoding: received, as: UTF8.self) }

    func close() { Glibc.close(fd) }
}

enum RawConnectionError: Error { case failed(String) }

/// One request on a fresh connection (`Connection: close`), the whole reply as text.
func rawExchange(port: Int, _ request: String, timeout: Double = 10) async throws -> String {
    try await Task.detached {
        let c = try RawConnection(port: port)
        defer { c.close() }
        try c.send(request)
        _ = c.waitForClose(timeout: timeout)
        return c.receivedText
    }.value
}
