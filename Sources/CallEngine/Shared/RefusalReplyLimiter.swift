import IPCWire

/// PROTOCOL.md 3.4: "Replies to refused messages are limited: at most 5 a second per sender
/// (`curId`) and 50 a second in all per device, the rest dropped and counted." A flood of bad
/// messages must not become a flood of `stop` replies on the out topic, which every app of the
/// household reads (a genuine ring would queue behind them; issue 23).
///
/// Sans-IO: the caller passes the time (unix ms from its injected clock); nothing here reads a
/// clock or sleeps. The windows slide: at most `perSender` replies to one sender and `perDevice`
/// in all within any `windowMs`. A dropped reply uses up no budget. Memory is bounded whatever
/// the flood: a sender is remembered only once a reply to it was sent, and at most `perDevice`
/// senders can have had one within the last window; older ones are forgotten when room is needed.
public struct RefusalReplyLimiter: Sendable {
    /// The limits; `init()` takes PROTOCOL.md 3.4's.
    public struct Limits: Sendable, Equatable {
        public var perSender: Int
        public var perDevice: Int
        public var windowMs: Int64

        /// PROTOCOL.md 3.4: 5 a second per sender, 50 a second per device.
        public static let protocolDefault = Limits(perSender: 5, perDevice: 50, windowMs: 1000)

        /// Values below 1 count as 1 (a limiter always lets something through).
        public init(perSender: Int, perDevice: Int, windowMs: Int64) {
            self.perSender = max(1, perSender)
            self.perDevice = max(1, perDevice)
            self.windowMs = max(1, windowMs)
        }
    }

    /// Which limit dropped a reply (the `scope` label of `ipcemu_refusal_replies_dropped_total`).
    public enum Scope: String, Sendable, CaseIterable {
        /// The sender had its `perSender` replies within the window.
        case sender
        /// The device had sent `perDevice` replies within the window.
        case device
    }

    /// What to do with one reply.
    public enum Verdict: Sendable, Equatable {
        case send
        case drop(Scope)
    }

    public let limits: Limits
    private var device: SlidingWindow
    private var senders: [String: SlidingWindow] = [:]
    /// The latest time seen: a clock that goes back more than a window starts every window over.
    private var latest: Int64 = .min

    public init(limits: Limits = .protocolDefault) {
        self.limits = limits
        self.device = SlidingWindow(capacity: limits.perDevice)
    }

    /// Senders remembered now (at most `limits.perDevice`).
    public var trackedSenders: Int { senders.count }

    /// Decides one reply to a refused message from `sender`, at `now` (unix ms); a `send` counts
    /// against both budgets.
    public mutating func admit(replyTo sender: String, now clockNow: Int64) -> Verdict {
        let window = limits.windowMs
        if clockNow < latest, latest.subtractingSaturating(clockNow) > window {
            // The clock jumped back (set by hand, a VM restored): what was sent "later" cannot
            // hold replies back for that long. Start over.
            device = SlidingWindow(capacity: limits.perDevice)
            senders.removeAll(keepingCapacity: true)
            latest = clockNow
        }
        // A step back within a window (a clock adjusted a little) counts as no time passing.
        latest = max(latest, clockNow)
        let now = latest
        if let own = senders[sender], !own.hasRoom(now: now, windowMs: window) { return .drop(.sender) }
        guard device.hasRoom(now: now, windowMs: window) else { return .drop(.device) }
        device.record(now)
        if senders[sender] == nil, senders.count >= limits.perDevice { forgetQuietSenders(now: now) }
        senders[sender, default: SlidingWindow(capacity: limits.perSender)].record(now)
        return .send
    }

    /// The effects of one received message, with the replies to a refused message limited:
    /// when the engine refused the message (`.refused`, `.refusedDoorbell`), every `.send` and
    /// `.sendDoorbell` among its effects answers it (PROTOCOL.md 3.4's `stop` `invalid_params`,
    /// `expired`, `undefined_session`; 8.2's `stop`). Other effects pass untouched, in order.
    /// Returns the effects to carry out and the scope of each reply dropped.
    public mutating func limitReplies(in effects: [CallEffect], now: Int64) -> (effects: [CallEffect], dropped: [Scope]) {
        guard let sender = Self.refusedSender(effects) else { return (effects, []) }
        var kept: [CallEffect] = []
        kept.reserveCapacity(effects.count)
        var dropped: [Scope] = []
        for effect in effects {
            switch effect {
            case .send, .sendDoorbell:
                switch admit(replyTo: sender, now: now) {
                case .send: kept.append(effect)
                case .drop(let scope): dropped.append(scope)
                }
            default:
                kept.append(effect)
            }
        }
        return (kept, dropped)
    }

    /// The sender of the refused message among `effects`, or nil when nothing was refused.
    static func refusedSender(_ effects: [CallEffect]) -> String? {
        for effect in effects {
            switch effect {
            case .refused(let message, _): return message.curId
            case .refusedDoorbell(let message, _): return message.uid ?? ""
            default: continue
            }
        }
        return nil
    }

    /// Forgets every sender whose last reply is a whole window old (it can no longer hold a reply
    /// back). Called only when a reply is about to be sent, so at most `perDevice - 1` senders
    /// had one within the window and some room is made.
    private mutating func forgetQuietSenders(now: Int64) {
        let window = limits.windowMs
        senders = senders.filter { !$0.value.isQuiet(now: now, windowMs: window) }
    }
}

/// The times of the last `capacity` replies (a ring): room for one more when fewer were sent, or
/// the oldest of them is a whole window before `now`.
struct SlidingWindow: Sendable {
    private var times: [Int64] = []
    private var oldest = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        times.reserveCapacity(min(self.capacity, 64))
    }

    func hasRoom(now: Int64, windowMs: Int64) -> Bool {
        guard times.count == capacity else { return true }
        return now.subtractingSaturating(times[oldest]) >= windowMs
    }

    /// True when the newest time is a whole window before `now` (or nothing was recorded).
    func isQuiet(now: Int64, windowMs: Int64) -> Bool {
        guard !times.isEmpty else { return true }
        let newest = times.count < capacity ? times[times.count - 1] : times[(oldest + capacity - 1) % capacity]
        return now.subtractingSaturating(newest) >= windowMs
    }

    mutating func record(_ now: Int64) {
        if times.count < capacity {
            times.append(now)
        } else {
            times[oldest] = now
            oldest = (oldest + 1) % capacity
        }
    }
}
