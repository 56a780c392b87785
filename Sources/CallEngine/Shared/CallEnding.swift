import IPCWire

extension CallRoleEngine {
    /// Ends the current call: stops the ringing (if it rings here), closes the media link (if
    /// answered), cancels the timers, and reports the record last; then the state is `next`. The
    /// caller has already added the messages the ending sends.
    mutating func end(_ ending: Ending, now: Int64, then next: State = .idle) -> [CallEffect] {
        guard let closing = closingCall(ending, now: now) else {
            let effects = endWithoutCall()
            state = next
            return effects
        }
        endedSessions.note(closing.sessionId)
        var effects: [CallEffect] = []
        if closing.stopsRinging { effects.append(.stopRinging(sessionId: closing.sessionId)) }
        if closing.closesLink { effects.append(.closeMediaLink(sessionId: closing.sessionId)) }
        effects += timers.cancelAll()
        effects.append(.callEnded(closing.record))
        state = next
        return effects
    }

    /// The role stops (PROTOCOL.md 3.3 for the device, mirrored by the apps; after it for the
    /// doorbell kinds): the current call gets the role's farewell messages (reason `shutdown`) and
    /// ends. Afterwards every input is refused.
    mutating func shutdown(now: Int64) -> [CallEffect] {
        if state.phase == .shutDown { return [] }
        guard let farewell = farewell() else {
            let effects = endWithoutCall()
            state = .shutDown
            return effects
        }
        return farewell.messages + end(farewell.ending, now: now, then: .shutDown)
    }
}
