import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// Gives back the two descriptors of the socketpair libmosquitto 2.0 opens in every `mosquitto_new`
/// (DESIGN.md "Scale": descriptors are the first wall).
///
/// libmosquitto writes one byte to that pair on every queued packet only to wake its own
/// `mosquitto_loop` out of `select()`. Our clients never run `mosquitto_loop`: the event loop drives
/// them with `mosquitto_loop_read/write/misc` under epoll, so nobody ever reads the pair (its buffer
/// just fills up). Every use of the pair inside libmosquitto (the wake-up write, the `select()` set,
/// `mosquitto_destroy`) is guarded by "!= INVALID_SOCKET", so a client whose pair is closed and set
/// to -1 behaves exactly as before, with one descriptor instead of three (a fleet of 10,000 fits in
/// one process under a 20,000 limit) and one `write()` less per packet.
///
/// The pair lives in the first members of libmosquitto's private `struct mosquitto` (client build):
/// `int sock; int sockpairR, sockpairW;` (lib/mosquitto_internal.h, unchanged through 2.0.x and
/// later). Nothing is assumed blindly: the pair is released only if the library is 2.x, the first
/// member equals what `mosquitto_socket()` returns, and the two others are distinct Unix stream
/// sockets connected to each other (a byte written to one is read from the other). Otherwise the
/// client keeps its three descriptors and `DescriptorBudget` counts three.
public enum MosquittoSocketpair {
    /// Whether this libmosquitto's clients give their pair back (probed once on a throwaway handle).
    public static let releasable: Bool = {
        guard MosquittoLibrary.ensureInitialized(), MosquittoLibrary.majorVersion == 2,
              let probe = mosquitto_new(nil, true, nil) else { return false }
        defer { mosquitto_destroy(probe) }
        return releasePair(probe)
    }()

    /// Closes `mosq`'s socketpair and marks it unused, after checking it is what it should be.
    /// Call right after `mosquitto_new`, before any other thread sees the handle. Returns whether
    /// the pair was released.
    @discardableResult
    static func release(_ mosq: OpaquePointer) -> Bool {
        guard releasable else { return false }
        return releasePair(mosq)
    }

    private static func releasePair(_ mosq: OpaquePointer) -> Bool {
        let fields = UnsafeMutableRawPointer(mosq)
        let sock = fields.load(fromByteOffset: 0, as: Int32.self)
        let reader = fields.load(fromByteOffset: 4, as: Int32.self)
        let writer = fields.load(fromByteOffset: 8, as: Int32.self)
        guard sock == mosquitto_socket(mosq), reader >= 0, writer >= 0, reader != writer, reader != sock,
              isUnixStream(reader), isUnixStream(writer), arePaired(writer: writer, reader: reader) else {
            return false
        }
        // Unused first, then closed: libmosquitto never sees a closed number.
        fields.storeBytes(of: -1, toByteOffset: 4, as: Int32.self)
        fields.storeBytes(of: -1, toByteOffset: 8, as: Int32.self)
        close(reader)
        close(writer)
        return true
    }

    private static func isUnixStream(_ fd: Int32) -> Bool {
        var domain: Int32 = 0, type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 else { return false }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return false }
        return domain == AF_UNIX && type == Int32(SOCK_STREAM.rawValue)
    }

    /// A byte written to `writer` arrives at `reader` (both are non-blocking in libmosquitto; the
    /// flags make sure neither call can block here anyway).
    private static func arePaired(writer: Int32, reader: Int32) -> Bool {
        var out: UInt8 = 0x5A
        guard send(writer, &out, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) == 1 else { return false }
        var back: UInt8 = 0
        return recv(reader, &back, 1, Int32(MSG_DONTWAIT)) == 1 && back == out
    }
}
