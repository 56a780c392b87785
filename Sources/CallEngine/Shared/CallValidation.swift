import IPCWire

/// PROTOCOL.md 3.4: the checks on a `call` that are answered with `stop` `invalid_params`.
enum CallValidation {
    enum Verdict: Sendable {
        /// Valid; the call's deadline (unix ms).
        case valid(deadline: Int64)
        /// Invalid; what is wrong.
        case invalid(String)
    }

    /// Checks `call` for a callee whose id is `localId` and which takes the channel types in
    /// `supported`. An absent `channelType` is taken as "no constraint" **[ours]**.
    /// Numbers are range-checked before any arithmetic (3.4): the deadline comes back capped at
    /// 24 h after `now` (a passed one is for the caller to refuse as `expired`).
    static func check(_ call: CallMessage, localId: String, supported: Set<ChannelType>, now: Int64) -> Verdict {
        // 3.4: "whose targetId is not this device".
        guard call.targetId == localId else {
            return .invalid("targetId '\(call.targetId)' is not '\(localId)'")
        }
        // 3.4: "a callType ... outside its listed values is invalid_params" (the decoder kept it).
        if let problem = call.problem { return .invalid(problem) }
        // 3.4: "whose extra or bizType is missing or not screen_ipc".
        guard let extra = call.extra else { return .invalid("missing 'extra'") }
        if let problem = extra.problem { return .invalid(problem) }
        guard let biz = extra.bizType else { return .invalid("missing 'extra.bizType'") }
        guard biz == screenIPCBizType else {
            return .invalid("extra.bizType '\(biz)' is not '\(screenIPCBizType)'")
        }
        // 3.4: "whose channelType the profile does not support".
        if let raw = extra.channelType {
            guard let channel = ChannelType(rawValue: raw), supported.contains(channel) else {
                return .invalid("extra.channelType \(raw) is not supported")
            }
        }
        // 3: `timeout` is required on `call` (the decoder enforces it; a hand-made message may not).
        guard let deadline = call.timeout else { return .invalid("missing 'timeout'") }
        return .valid(deadline: WireTime.callDeadline(deadline, now: now))
    }
}
