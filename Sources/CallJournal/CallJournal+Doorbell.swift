import CallEngine
import CallRuntime
import IPCWire

/// The doorbell parts of PROTOCOL.md 8 in the journal: a doorbell call's presses (43) and its
/// `video_doorbell` messages as events, its end as a call (with the device's kind), wakes with
/// their latency, and left messages with their path and duration.
extension JournalEntry {
    /// A `video_doorbell` message in or out (PROTOCOL.md 8.2): `event` is its event, `session` the
    /// call id, `peer` the user concerned (absent for `timeout` and `cancel`).
    init(device: String, direction: JournalDirection, doorbell m: VideoDoorbellMessage, kind: String, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        self.kind = .event
        session = m.eData
        self.direction = direction.rawValue
        reason = m.reason
        event = m.event.rawValue
        peer = m.uid
        doorbellKind = kind
    }

    /// A press announced over protocol 43 (PROTOCOL.md 8.1): event `press`, out to the household.
    init(device: String, press callId: String, kind: String, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        self.kind = .event
        session = callId
        direction = JournalDirection.out.rawValue
        event = "press"
        doorbellKind = kind
    }

    /// The device woke `latencyMs` after the wake request (PROTOCOL.md 8.4).
    init(device: String, wokeAfter latencyMs: Int64, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        kind = .wake
        session = ""
        direction = JournalDirection.in.rawValue
        self.latencyMs = latencyMs
    }

    /// A left message of missed call `session` was written (PROTOCOL.md 8.5).
    init(device: String, message path: String, session: String, durationSeconds: Int?, at ms: Int64, time: String) {
        t = ms
        self.time = time
        self.device = device
        kind = .message
        self.session = session
        direction = JournalDirection.in.rawValue
        self.path = path
        self.durationSeconds = durationSeconds
    }
}

extension CallJournal {
    /// A `video_doorbell` message the device received (`in`) or sent (`out`), of a device of doorbell kind `kind`.
    public func record(direction: JournalDirection, doorbell m: VideoDoorbellMessage, kind: String, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, direction: direction, doorbell: m, kind: kind, at: ms, time: Self.iso(ms)))
    }

    /// A press announced call `callId` over protocol 43.
    public func record(press callId: String, kind: String, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, press: callId, kind: kind, at: ms, time: Self.iso(ms)))
    }

    /// A doorbell call ended: the doorbell machine's record, with the device's kind.
    public func record(endedDoorbell r: CallRecord, kind: String, at ms: Int64 = WallClock.nowMs()) {
        var entry = JournalEntry(device: devId, ended: r, at: ms, time: Self.iso(ms))
        entry.doorbellKind = kind
        append(entry)
    }

    /// The device woke, `latencyMs` after the wake request.
    public func record(wokeAfter latencyMs: Int64, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, wokeAfter: latencyMs, at: ms, time: Self.iso(ms)))
    }

    /// A left message was written at `path` (its missed call `session`).
    public func record(message path: String, session: String, durationSeconds: Int?, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, message: path, session: session, durationSeconds: durationSeconds, at: ms,
                            time: Self.iso(ms)))
    }
}
