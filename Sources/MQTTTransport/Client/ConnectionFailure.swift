import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

extension MQTTClientOptions {
    /// A reason a person can act on, e.g. "connection refused: 127.0.0.1:1883".
    func failureReason(_ rc: Int32, _ systemError: Int32, wasConnected: Bool) -> String {
        let endpoint = endpointDescription
        switch rc {
        case mosqErrno:
            switch systemError {
            case ECONNREFUSED: return "connection refused: \(endpoint)"
            case ECONNRESET: return "connection reset by the broker: \(endpoint)"
            case ETIMEDOUT: return "connection timed out: \(endpoint)"
            case EHOSTUNREACH, ENETUNREACH: return "broker unreachable: \(endpoint)"
            case EPIPE: return "connection lost: \(endpoint)"
            case 0: return "connection failed: \(endpoint)"
            default: return "\(errnoDescription(systemError)): \(endpoint)"
            }
        case mosqConnectionLost:
            return wasConnected
                ? "connection lost: \(endpoint)" : "connection closed by the broker: \(endpoint)"
        case mosqConnectionRefused:
            return "broker refused the connection: \(endpoint)"
        case MOSQ_ERR_KEEPALIVE.rawValue:
            return "keepalive timeout (no PINGRESP): \(endpoint)"
        case MOSQ_ERR_EAI.rawValue, MOSQ_ERR_LOOKUP.rawValue:
            return "cannot resolve broker host: \(host)"
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return "TLS handshake failed: \(endpoint)"
        case MOSQ_ERR_PROTOCOL.rawValue, MOSQ_ERR_MALFORMED_PACKET.rawValue:
            return "protocol error from the broker: \(endpoint)"
        default:
            return "\(MosquittoLibrary.describe(rc)): \(endpoint)"
        }
    }
}
