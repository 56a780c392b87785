/// A timer the engine asks the glue to run. Timers are keyed by session, so one that fires late
/// for a session that has ended is recognised and ignored.
public struct CallTimer: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable, Hashable {
        /// Policy `answerAfter`: answer when it fires.
        case autoAnswer
        /// Policy `rejectAfter`: reject when it fires.
        case autoReject
        /// The call's deadline (device: exactly it; app: it plus a small grace).
        case callDeadline
        /// PROTOCOL.md 3.3: media link not up within `connectTimeout` after `answer`.
        case connectTimeout
        /// PROTOCOL.md 3.3: media link lost and not back within the grace.
        case mediaLost
        /// PROTOCOL.md 3.3: no heartbeat (device) / no heartbeat reply (app) for `heartbeatTimeout`.
        case heartbeatWatchdog
        /// App only: time to send the next heartbeat.
        case heartbeatSend
        /// PROTOCOL.md 8.2: no `accept` within `doorbell.ringTimeout` (doorbell kinds; the session is
        /// the call id).
        case ringTimeout
        /// PROTOCOL.md 8.5: the message window after a ring timeout closes.
        case messageWindow
        /// PROTOCOL.md 8.4: `power.sleepAfter` seconds without activity: the device falls asleep
        /// (the session is the devId).
        case sleepAfter
        /// PROTOCOL.md 8.4: `power.wakeLatency` has passed since a wake: the device is awake.
        case wakeLatency
        /// PROTOCOL.md 8.4: a minute of video sent: the battery drains (kind `doorbell`).
        case batteryDrain
    }

    public var kind: Kind
    public var sessionId: String

    public init(_ kind: Kind, sessionId: String) {
        self.kind = kind
        self.sessionId = sessionId
    }

    public var description: String { "\(kind.rawValue)[\(sessionId)]" }
}

/// The timers an engine has armed and not yet seen fire or cancelled, in arming order (no
/// dictionary: effects must come out in a deterministic order).
struct ArmedTimers: Sendable {
    private struct Entry: Sendable {
        var timer: CallTimer
        var at: Int64
    }

    private var entries: [Entry] = []

    /// Arms `timer` at `at`, replacing an earlier arming of the same timer (the glue does the same).
    mutating func arm(_ timer: CallTimer, at: Int64) -> CallEffect {
        if let i = entries.firstIndex(where: { $0.timer == timer }) {
            entries[i].at = at
        } else {
            entries.append(Entry(timer: timer, at: at))
        }
        return .armTimer(timer, at: at)
    }

    /// Cancels `timer` if it is armed.
    mutating func cancel(_ timer: CallTimer) -> [CallEffect] {
        guard let i = entries.firstIndex(where: { $0.timer == timer }) else { return [] }
        entries.remove(at: i)
        return [.cancelTimer(timer)]
    }

    /// Cancels every armed timer, in `Kind` declaration order.
    mutating func cancelAll() -> [CallEffect] {
        let order = CallTimer.Kind.allCases
        let sorted = entries.sorted { a, b in
            (order.firstIndex(of: a.timer.kind) ?? 0, a.timer.sessionId) < (order.firstIndex(of: b.timer.kind) ?? 0, b.timer.sessionId)
        }
        entries.removeAll()
        return sorted.map { .cancelTimer($0.timer) }
    }

    /// A timer fired: true (and forgotten) if it was armed, false if it is stale.
    mutating func take(_ timer: CallTimer) -> Bool {
        guard let i = entries.firstIndex(where: { $0.timer == timer }) else { return false }
        entries.remove(at: i)
        return true
    }

    /// When `timer` is due, if armed.
    func dueTime(of timer: CallTimer) -> Int64? {
        entries.first(where: { $0.timer == timer })?.at
    }

    /// Every armed timer with its due time, in arming order.
    var all: [(timer: CallTimer, at: Int64)] { entries.map { ($0.timer, $0.at) } }
}
