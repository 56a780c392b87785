import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide libmosquitto setup. `mosquitto_lib_init` runs exactly once (a Swift `static let` is
/// initialised once, thread-safely), and never `mosquitto_lib_cleanup`: clients may live until exit.
enum MosquittoLibrary {
    private static let initResult: Int32 = {
        // A peer closing its socket must surface as EPIPE from send(), never kill the process.
        signal(SIGPIPE, SIG_IGN)
        return mosquitto_lib_init()
    }()

    /// Initialises libmosquitto if nobody has yet; returns false if it could not be initialised.
    static func ensureInitialized() -> Bool { initResult == MOSQ_ERR_SUCCESS.rawValue }

    /// libmosquitto's text for one of its error codes.
    static func describe(_ rc: Int32) -> String {
        guard let text = mosquitto_strerror(rc) else { return "libmosquitto error \(rc)" }
        return String(cString: text)
    }

    /// libmosquitto's text for a CONNACK return code (MQTT 3.1.1 section 3.2.2.3).
    static func describeConnack(_ code: Int32) -> String {
        guard let text = mosquitto_connack_string(code) else { return "CONNACK code \(code)" }
        return String(cString: text)
    }

    /// The installed libmosquitto's major version.
    static var majorVersion: Int32 {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return major
    }

    /// The installed libmosquitto's version, "major.minor.revision".
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}

// libmosquitto's result codes as plain Int32s, the type its functions return.
let mosqSuccess = MOSQ_ERR_SUCCESS.rawValue
let mosqNoConnection = MOSQ_ERR_NO_CONN.rawValue
let mosqConnectionLost = MOSQ_ERR_CONN_LOST.rawValue
let mosqConnectionRefused = MOSQ_ERR_CONN_REFUSED.rawValue
let mosqErrno = MOSQ_ERR_ERRNO.rawValue
