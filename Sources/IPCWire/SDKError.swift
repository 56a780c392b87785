/// The app SDK's call error codes (PROTOCOL.md 3.5): what an app reports when a call ends
/// other than by its own hang-up.
public enum SDKError: Int, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    case invalidParams = -2500
    case invalidData = -2503
    case undefinedSession = -2508
    case rejected = -2510
    case peerBusy = -2511
    case notAnswered = -2512
    case peerHungUp = -2513
    case onCalling = -2520
    case rejectedByOthers = -2521
    case answeredByOthers = -2522
    case cancelled = -2523
    case timeout = -2530
    case connectFailed = -2531
    case disconnect = -2532
    case remoteStop = -2533

    public var description: String {
        let name: String = switch self {
        case .invalidParams: "invalid params"
        case .invalidData: "invalid data"
        case .undefinedSession: "undefined session id"
        case .rejected: "rejected"
        case .peerBusy: "peer busy"
        case .notAnswered: "not answered"
        case .peerHungUp: "peer hung up"
        case .onCalling: "on calling"
        case .rejectedByOthers: "rejected by others"
        case .answeredByOthers: "answered by others"
        case .cancelled: "cancelled"
        case .timeout: "timeout"
        case .connectFailed: "connect failed"
        case .disconnect: "disconnect"
        case .remoteStop: "remote stop"
        }
        return "\(rawValue) \(name)"
    }
}
