/// What the callee does with a valid incoming call once it rings (PROTOCOL.md 3.1.3). The device's
/// comes from its profile; the app role uses the same choices as its auto policy.
public enum AnswerPolicy: Sendable, Equatable, Hashable {
    /// Answer after this many milliseconds of ringing (0 or less: at once).
    case answerAfter(ms: Int64)
    /// Reject at once (after the `ring`).
    case reject
    /// Ring, then reject after this many milliseconds (0 or less: at once, as `reject`). A real
    /// device whose owner declines on the screen rejects a moment after it starts ringing.
    case rejectAfter(ms: Int64)
    /// Stay silent until the deadline (`not_answered` then comes from the caller's side rules).
    case ignore
    /// Reply `busy` at once (after the `ring`).
    case busy
    /// Wait for the operator (`LocalAction.answer`, `.reject`, `.busy`).
    case manual
}
