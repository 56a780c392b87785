import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A one-client MQTT 3.1.1 server for tests that must see, or withhold, what a real broker would
/// answer: it accepts one connection, answers CONNECT with CONNACK 0 and PINGREQ with PINGRESP
/// (unless `answersPings` is false), and records each packet's type and arrival, and when the
/// client closed the connection, in monotonic seconds (`ScriptedMQTTBroker.now()`, the clock
/// libmosquitto and the client's loop use). It serves on a thread of its own, never on Swift's
/// cooperative pool; `stop()` ends it.
public final class ScriptedMQTTBroker: @unchecked Sendable {
    /// MQTT control packet types (the high nibble of the first byte).
    public enum PacketType: UInt8, Sendable {
        case connect = 1, connack = 2, publish = 3, subscribe = 8, pingreq = 12, pingresp = 13, disconnect = 14
    }

    public struct Packet: Sendable {
        /// The high nibble of its first byte (`PacketType`'s raw value).
        public let type: UInt8
        public let at: Double
        /// Everything after the fixed header (variable header and payload).
        public let body: [UInt8]

        /// A CONNECT's keep alive in seconds (MQTT 3.1.1: after the protocol name, level and
        /// flags); nil for other packets or a CONNECT too short to hold one.
        public var connectKeepAlive: Int? {
            guard type == PacketType.connect.rawValue, body.count >= 10 else { return nil }
            return Int(body[8]) << 8 | Int(body[9])
        }
    }

    public let port: Int
    private let listenFD: Int32
    private let answersPings: Bool
    private let state = Mutex(State())

    private struct State {
        var received: [Packet] = []
        var connackSentAt: Double?
        var closedAt: Double?
        var clientFD: Int32 = -1
        var stopped = false
    }

    public init(answersPings: Bool = true) throws {
        let listener = try SilentListener.makeListeningSocket()
        listenFD = listener.fd
        port = listener.port
        self.answersPings = answersPings
        let thread = Thread { [self] in self.serve() }
        thread.start()
    }

    deinit { close(listenFD) }

    /// CLOCK_MONOTONIC in seconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1_000_000_000
    }

    public var received: [Packet] { state.withLock { $0.received } }
    public var connackSentAt: Double? { state.withLock { $0.connackSentAt } }
    /// When the client's side of the connection ended (read returned 0 or failed).
    public var closedAt: Double? { state.withLock { $0.closedAt } }

    /// When each PINGREQ arrived.
    public var pingRequests: [Double] {
        received.filter { $0.type == PacketType.pingreq.rawValue }.map(\.at)
    }

    /// Ends the serving thread: the listening socket and the connection are shut down.
    public func stop() {
        let client = state.withLock { (state: inout State) -> Int32 in
            state.stopped = true
            return state.clientFD
        }
        _ = shutdown(listenFD, Int32(SHUT_RDWR))
        if client >= 0 { _ = shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func serve() {
        let fd = accept(listenFD, nil, nil)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let stopped = state.withLock { (state: inout State) -> Bool in
            state.clientFD = fd
            return state.stopped
        }
        guard !stopped else { return }
        while let (first, body) = readPacket(fd) {
            let type = first >> 4
            let at = Self.now()
            state.withLock { $0.received.append(Packet(type: type, at: at, body: body)) }
            switch PacketType(rawValue: type) {
            case .connect:
                writeAll(fd, [0x20, 0x02, 0x00, 0x00])
                let sent = Self.now()
                state.withLock { $0.connackSentAt = sent }
            case .pingreq where answersPings:
                writeAll(fd, [0xD0, 0x00])
            default:
                break
            }
        }
        let closed = Self.now()
        state.withLock { $0.closedAt = closed }
    }

    /// One packet: its first byte and its body (nil at the end of the stream).
    private func readPacket(_ fd: Int32) -> (UInt8, [UInt8])? {
        guard let first = readExactly(fd, 1)?.first else { return nil }
        var length = 0
        var shift = 0
        while true {
            guard let byte = readExactly(fd, 1)?.first, shift <= 21 else { return nil }
            length |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard let body = readExactly(fd, length) else { return nil }
        return (first, body)
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return read(fd, base + done, count - done)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return send(fd, base + done, bytes.count - done, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            done += n
        }
    }
}
