import CallEngine
import CallRuntime

/// PROTOCOL.md 3.4: "Replies to refused messages are limited: at most 5 a second per sender
/// (`curId`) and 50 a second in all per device, the rest dropped and counted." One budget for every
/// reply the device makes to a message it refuses: the engines' `stop`s (3.4, 8.2), a refused
/// offer's `disconnect` (4), a refused 312's `resCode` -1 (8.6) and the report answering a protocol 5
/// that set nothing (8.3). The rule is `RefusalReplyLimiter` (CallEngine, sans-IO) on the device's
/// injected clock; a dropped reply is counted in `refusals.droppedReplies` (`/metrics`
/// `ipcemu_refusal_replies_dropped_total{scope}`). The refusal itself is still counted and logged.
extension Device {
    /// The effects of a received message with the replies to a refused one limited.
    func limitRefusalReplies(_ effects: [CallEffect]) -> [CallEffect] {
        let (kept, dropped) = refusalReplies.limitReplies(in: effects, now: clock.nowMs())
        for scope in dropped { refusals.replyDropped(scope) }
        return kept
    }

    /// Whether the glue's own reply to a refused message from `sender` may go out now; false
    /// (counted) when a limit drops it.
    func admitRefusalReply(to sender: String) -> Bool {
        switch refusalReplies.admit(replyTo: sender, now: clock.nowMs()) {
        case .send:
            return true
        case .drop(let scope):
            refusals.replyDropped(scope)
            return false
        }
    }
}
