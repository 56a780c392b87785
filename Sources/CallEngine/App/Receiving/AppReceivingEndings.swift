import IPCWire

extension AppCallEngine {
    /// The device ends the call (reject, busy, not_answered, hang_up, cancel, already_answered,
    /// already_rejected, stop). The app never replies (and never to a `stop`); the record carries
    /// the SDK error of PROTOCOL.md 3.5.
    mutating func receiveEnding(_ message: CallMessage, now: Int64) -> [CallEffect] {
        let outcome: CallOutcome = switch message.event {
        case .reject: .rejected
        case .busy: .busy
        case .notAnswered, .timeout: .notAnswered
        case .hangUp: .hungUp
        case .cancel: .cancelled
        case .alreadyAnswered: .answeredElsewhere
        case .alreadyRejected: .rejectedElsewhere
        case .stop, .call, .ring, .answer, .heartbeat: .stopped
        }
        let sdkError = SDKError.forPeerEnding(message.event, reason: message.reason)
        return end(.remote(outcome, message: message, sdkError: sdkError), now: now)
    }
}
