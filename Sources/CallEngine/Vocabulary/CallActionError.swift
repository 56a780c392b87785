import IPCWire

/// Why a local action was refused. Nothing changes when one is.
public enum CallActionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Already in a session (app: SDK -2520 "on calling"; device: a press while busy).
    case onCalling(sessionId: String)
    /// The action needs a phase the engine is not in (answer with nothing ringing, ...).
    case wrongPhase(action: String, phase: CallPhase)
    /// A press with no target and an empty household.
    case noTargets
    /// An argument is unusable (empty session id, non-positive timeout, ...).
    case invalidArgument(String)
    /// The action belongs to the other role (`press` on an app, `startCall` on a device).
    case notInThisRole(action: String, role: CallRole)
    /// The engine has shut down.
    case shutDown

    /// The SDK error an app reports for this refusal, where the SDK has one.
    public var sdkError: SDKError? {
        switch self {
        case .onCalling: .onCalling
        case .invalidArgument, .noTargets: .invalidParams
        case .wrongPhase, .notInThisRole, .shutDown: nil
        }
    }

    public var description: String {
        switch self {
        case .onCalling(let s): "already in session '\(s)'"
        case .wrongPhase(let action, let phase): "cannot \(action) while \(phase.rawValue)"
        case .noTargets: "no target to call: none named and the household is empty"
        case .invalidArgument(let why): "invalid argument: \(why)"
        case .notInThisRole(let action, let role): "\(action) is not something the \(role.rawValue) does"
        case .shutDown: "shut down"
        }
    }
}
