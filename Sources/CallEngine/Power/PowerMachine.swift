import IPCWire

/// What the power machine needs from the profile (PROTOCOL.md 8.4), in the engines' units.
public struct PowerConfig: Sendable, Equatable {
    /// The device id: the session of its power timers (`CallTimer(kind, sessionId: devId)`).
    public var devId: String
    /// `power.lowPower`: the device sleeps when idle. False: it never sleeps.
    public var lowPower: Bool
    /// `power.sleepAfter` in ms.
    public var sleepAfterMs: Int64
    /// `power.wakeLatency` in ms.
    public var wakeLatencyMs: Int64
    /// `power.source` is battery: video sent drains it.
    public var onBattery: Bool
    /// `power.battery`: DP 145 at start, percent.
    public var battery: Int
    /// `power.drainPerStreamMinute`: percent per minute of video sent, per stream.
    public var drainPerStreamMinute: Double
    /// DP 147 at start (`power.lowBatteryThreshold`).
    public var lowBatteryThreshold: Int
    /// The device's DPs: the machine reports only these (149, 145, 212).
    public var dpIds: Set<DPId>

    public init(devId: String, lowPower: Bool, sleepAfterMs: Int64 = 180_000, wakeLatencyMs: Int64 = 1000,
                onBattery: Bool = false, battery: Int = 100, drainPerStreamMinute: Double = 1,
                lowBatteryThreshold: Int = 20, dpIds: Set<DPId> = Set(DataPointCatalogue.ids)) {
        self.devId = devId
        self.lowPower = lowPower
        self.sleepAfterMs = sleepAfterMs
        self.wakeLatencyMs = wakeLatencyMs
        self.onBattery = onBattery
        self.battery = battery
        self.drainPerStreamMinute = drainPerStreamMinute
        self.lowBatteryThreshold = lowBatteryThreshold
        self.dpIds = dpIds
    }
}

/// The device's power state (PROTOCOL.md 8.4): "sleep and wake are states of the device, not
/// flags" (DESIGN.md).
public enum PowerState: Sendable, Equatable {
    case awake
    case asleep
    /// A wake request was taken; the device is awake at `until` (unix ms).
    case waking(until: Int64)
}

/// Sleep, wake and battery of one device (PROTOCOL.md 8.4), sans-IO: inputs with the time (unix
/// ms) in, `PowerEffect`s out; it never reads a clock. One per device, beside its call engines.
///
/// The glue feeds it: `start` on connect; `receive` for every inbound message (it says whether to
/// serve, drop or hold it); `activity` for any other call, link, press or DP traffic the device
/// itself makes; `sessionsChanged`/`streamsChanged` when calls, links or video streams open or
/// close; `wakeRequest` for a valid wake topic payload (`WakeCheck`); `press`; `timerFired`;
/// `shutdown`.
public struct PowerMachine: Sendable {
    public let config: PowerConfig
    public private(set) var state: PowerState = .awake
    var timers = ArmedTimers()
    /// Calls and links open now: the device is not idle.
    public private(set) var openSessions = 0
    /// When the current wake was requested (unix ms), while waking.
    var wakeRequestedAt: Int64 = 0
    var held: [HeldDPSet] = []
    var isShutDown = false
    var battery: BatteryAccount

    /// How early (ms) a due timer may come back and still count (the scheduler's monotonic clock
    /// against the wall clock the machine is fed).
    public static let earlyFiringToleranceMs: Int64 = 100

    /// At most this many protocol 5 commands are held while asleep; later ones are dropped.
    public static let heldLimit = 16

    /// PROTOCOL.md 8.4: asleep the device "drops, counted, every 302, 308, 309, 312, 5 and 31
    /// message".
    public static let droppedWhileAsleep: Set<Int64> = [302, 308, 309, 312, 5, 31]

    public init(config: PowerConfig) {
        self.config = config
        self.battery = BatteryAccount(config: config)
    }

    /// Awake and serving (false while asleep or waking): the retained meta's `"awake"`.
    public var isAwake: Bool { state == .awake }
    /// Asleep or still waking: messages of `droppedWhileAsleep` are dropped.
    public var isAsleep: Bool { state != .awake }

    /// The battery's whole percent now (DP 145).
    public var batteryPercent: Int { battery.reported }

    /// True when a message of this protocol number must be dropped now (8.4).
    public func shouldDrop(protocolNumber: Int64) -> Bool {
        isAsleep && Self.droppedWhileAsleep.contains(protocolNumber)
    }

    var sleepTimer: CallTimer { CallTimer(.sleepAfter, sessionId: config.devId) }
    var wakeTimer: CallTimer { CallTimer(.wakeLatency, sessionId: config.devId) }
    var drainTimer: CallTimer { CallTimer(.batteryDrain, sessionId: config.devId) }

    /// The device connected: the idle timer starts (low-power devices only).
    public mutating func start(now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        return restartIdle(now: now)
    }

    // MARK: Activity (8.4: "no call, link, press or DP traffic")

    /// Call, link, press or DP traffic while awake: the idle timer starts again. Asleep or
    /// waking, nothing (dropped messages are not activity).
    public mutating func activity(now: Int64) -> [PowerEffect] {
        guard !isShutDown, state == .awake else { return [] }
        return restartIdle(now: now)
    }

    /// The number of open calls and links changed. While any is open the device never falls
    /// asleep; when the last closes, the idle time starts from then.
    public mutating func sessionsChanged(open count: Int, now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        openSessions = max(0, count)
        guard state == .awake else { return [] }
        return restartIdle(now: now)
    }

    /// A message arrived on the in topic (PROTOCOL.md 8.4). Awake: serve it, and it is activity.
    /// Asleep or waking: a 302, 308, 309, 312, 5 or 31 is dropped, except a protocol 5 whose
    /// `dps` sets DP 149 to true, which wakes the device (asleep) and is held until awake ("its
    /// other DPs are applied once awake, as if they had come then"). Pass `setting` for a
    /// protocol 5 only.
    public mutating func receive(protocolNumber: Int64, setting dps: [(key: String, value: JSONValue)]? = nil,
                                 from uid: String = "", now: Int64) -> PowerVerdict {
        guard !isShutDown else { return PowerVerdict(.drop) }
        if state == .awake {
            return PowerVerdict(.serve, effects: restartIdle(now: now))
        }
        guard Self.droppedWhileAsleep.contains(protocolNumber) else { return PowerVerdict(.serve) }
        guard protocolNumber == 5, let dps, Self.setsAwakeTrue(dps), held.count < Self.heldLimit else {
            return PowerVerdict(.drop)
        }
        held.append(HeldDPSet(uid: uid, dps: dps, receivedAt: now))
        return PowerVerdict(.heldForWake, effects: wakeRequest(now: now))
    }

    /// A `dps` that sets DP 149 to true (the key as `DPKey` reads it, the value JSON `true`).
    static func setsAwakeTrue(_ dps: [(key: String, value: JSONValue)]) -> Bool {
        dps.contains { DPKey.id($0.key) == DataPointCatalogue.awake && $0.value == .bool(true) }
    }

    // MARK: Sleep (8.4: "After power.sleepAfter seconds ... reports DP 149 false and sleeps")

    /// The idle timer from now, when the device may sleep and nothing holds it awake.
    mutating func restartIdle(now: Int64) -> [PowerEffect] {
        guard config.lowPower else { return [] }
        guard openSessions == 0, battery.streams == 0 else { return cancel(sleepTimer) }
        return [arm(sleepTimer, at: now.addingSaturating(config.sleepAfterMs))]
    }

    mutating func fallAsleep(now: Int64) -> [PowerEffect] {
        state = .asleep
        var effects: [PowerEffect] = []
        if config.dpIds.contains(DataPointCatalogue.awake) {
            effects.append(.report([DPEntry(id: DataPointCatalogue.awake, value: .bool(false))]))
        }
        effects.append(.fellAsleep)
        return effects
    }

    // MARK: Wake (8.4)

    /// A wake request: a valid payload on `m/w/{devId}` (`WakeCheck`), or DP 149 set to true.
    /// Asleep: the device is awake after `wakeLatency` (at once when it is 0). Waking: "a wake
    /// while waking does not restart the wait". Awake: activity. A device that is not low-power is
    /// always awake.
    public mutating func wakeRequest(now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        switch state {
        case .awake:
            return restartIdle(now: now)
        case .waking:
            return []
        case .asleep:
            wakeRequestedAt = now
            guard config.wakeLatencyMs > 0 else { return wake(now: now, latencyMs: 0) }
            let until = now.addingSaturating(config.wakeLatencyMs)
            state = .waking(until: until)
            return [arm(wakeTimer, at: until), .waking(until: until)]
        }
    }

    /// A press (8.4: "A press wakes the device at once (no latency)"); awake, it is activity.
    public mutating func press(now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        switch state {
        case .awake:
            return restartIdle(now: now)
        case .asleep, .waking:
            return cancel(wakeTimer) + wake(now: now, latencyMs: 0)
        }
    }

    /// Awake now: "the device reports DP 149 true and every DP, and serves normally"; then the
    /// held commands are applied, and the idle time starts.
    mutating func wake(now: Int64, latencyMs: Int64) -> [PowerEffect] {
        state = .awake
        var setting: [DPEntry] = []
        if config.dpIds.contains(DataPointCatalogue.awake) {
            setting.append(DPEntry(id: DataPointCatalogue.awake, value: .bool(true)))
        }
        var effects: [PowerEffect] = [.reportAll(setting: setting), .wokeUp(latencyMs: max(0, latencyMs))]
        if !held.isEmpty {
            effects.append(.applyHeld(held))
            held.removeAll()
        }
        effects += restartIdle(now: now)
        return effects
    }

    // MARK: Timers

    /// A timer the machine armed is due. One no longer armed (cancelled, replaced) is stale and
    /// changes nothing.
    public mutating func timerFired(_ timer: CallTimer, now: Int64) -> [PowerEffect] {
        // A timer fed back well before its due time (a replaced arming the glue still ran) is stale
        // too. The scheduler runs on a monotonic clock and the machine on the wall clock, so a due
        // timer may come back a few milliseconds "early": that much is tolerated.
        guard !isShutDown, timer.sessionId == config.devId, let due = timers.dueTime(of: timer),
              now.addingSaturating(Self.earlyFiringToleranceMs) >= due, timers.take(timer)
        else { return [] }
        switch (timer.kind, state) {
        case (.sleepAfter, .awake) where openSessions == 0 && battery.streams == 0:
            return fallAsleep(now: now)
        case (.wakeLatency, .waking):
            return wake(now: now, latencyMs: now.subtractingSaturating(wakeRequestedAt))
        case (.batteryDrain, _):
            return drainDue(now: now)
        default:
            return []
        }
    }

    /// The device is going away: every timer is cancelled; later inputs do nothing.
    public mutating func shutdown() -> [PowerEffect] {
        guard !isShutDown else { return [] }
        isShutDown = true
        held.removeAll()
        return timers.cancelAll().compactMap { effect in
            if case .cancelTimer(let timer) = effect { return .cancelTimer(timer) }
            return nil
        }
    }

    // MARK: Timer bookkeeping

    mutating func arm(_ timer: CallTimer, at: Int64) -> PowerEffect {
        _ = timers.arm(timer, at: at)
        return .armTimer(timer, at: at)
    }

    mutating func cancel(_ timer: CallTimer) -> [PowerEffect] {
        timers.cancel(timer).isEmpty ? [] : [.cancelTimer(timer)]
    }

    /// When `timer` is due, if armed (for tests and the control API).
    public func dueTime(of kind: CallTimer.Kind) -> Int64? {
        timers.dueTime(of: CallTimer(kind, sessionId: config.devId))
    }
}
