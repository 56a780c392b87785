import IPCWire

extension DoorbellCallEngine {
    /// PROTOCOL.md 8.2: `stop` from a household user for the current call. Never answered (a stop
    /// for a stop would ping-pong, as §3.4).
    mutating func receiveStop(_ message: VideoDoorbellMessage, from uid: String, now: Int64) -> [CallEffect] {
        switch state {
        case .ringing(var ring):
            // 8.2: "stop (before an accept: this user declines, the call rings on for the others
            // [ours]". A repeated decline changes nothing more.
            if !ring.declined.contains(uid) { ring.declined.append(uid) }
            state = .ringing(ring)
            guard config.members.allSatisfy(ring.declined.contains) else { return [] }
            // 8.2: `timeout` "also when every household user has sent stop before an accept". The
            // message window opens as after a ring timeout (8.5 **[ours]**: the visitor sees the same).
            return ringEndsUnanswered(ring, Ending(.rejected, by: .remote, reason: .rejected,
                                                   remoteReason: message.reason), now: now)

        case .connected(let call) where call.peer == uid:
            // 8.2: "after it, from the user who accepted: hang up". No reply.
            return end(Ending(.hungUp, by: .remote, reason: message.reason.flatMap(StopReason.init(rawValue:)),
                              remoteReason: message.reason), now: now)

        case .connected:
            // 8.2: "A stop after the accept from anyone but the accepting user gets nothing and
            // changes nothing."
            return unexpected(message)

        case .idle, .messageWindow, .shutDown:
            return unexpected(message)
        }
    }
}
