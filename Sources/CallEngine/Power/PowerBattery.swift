import IPCWire

/// The battery's books (PROTOCOL.md 8.4): "DP 145 starts at power.battery and falls by
/// power.drainPerStreamMinute per minute of video sent", kept in whole stream-milliseconds and
/// milli-percent so every drop lands on an exact millisecond.
struct BatteryAccount: Sendable, Equatable {
    /// Milli-percent lost per stream-minute; 0 when the device does not drain (adapter).
    let drainMilliPercent: Int64
    /// The percent at the last reset (start, or the operator's `setBattery`).
    var base: Int
    /// Stream-milliseconds of video sent since the last reset.
    var consumedStreamMs: Int64 = 0
    /// Up to when `consumedStreamMs` is counted (unix ms).
    var accountedAt: Int64 = 0
    /// Video streams being sent now.
    var streams = 0
    /// The whole percent last reported (DP 145).
    var reported: Int
    /// DP 147.
    var threshold: Int
    /// True while the level is above the threshold: the next fall to it reports low battery.
    var lowArmed: Bool

    static let milliPercentPerPercent: Int64 = 1000
    static let msPerMinute: Int64 = 60_000

    init(config: PowerConfig) {
        let milli = (config.drainPerStreamMinute * Double(Self.milliPercentPerPercent)).rounded()
        drainMilliPercent = config.onBattery && milli.isFinite && milli > 0 ? Int64(min(milli, 1e9)) : 0
        base = min(max(config.battery, 0), 100)
        reported = base
        threshold = min(max(config.lowBatteryThreshold, 0), 100)
        lowArmed = base > threshold
    }

    /// Counts video sent up to `now`.
    mutating func account(now: Int64) {
        if streams > 0, now > accountedAt {
            consumedStreamMs = consumedStreamMs.addingSaturating(
                now.subtractingSaturating(accountedAt).multipliedSaturating(by: Int64(streams)))
        }
        accountedAt = max(accountedAt, now)
    }

    /// Whole percents lost since the last reset.
    var dropped: Int64 {
        guard drainMilliPercent > 0 else { return 0 }
        return consumedStreamMs.multipliedSaturating(by: drainMilliPercent) / (Self.msPerMinute * Self.milliPercentPerPercent)
    }

    /// The whole percent now.
    var level: Int { Int(max(0, Int64(base) - min(dropped, 100))) }

    /// When the next whole percent is lost at the current number of streams; nil when nothing
    /// drains (no streams, an adapter, or empty).
    func nextDrop(after now: Int64) -> Int64? {
        guard drainMilliPercent > 0, streams > 0, level > 0 else { return nil }
        let perPercent = Self.msPerMinute * Self.milliPercentPerPercent
        // The stream-ms at which `dropped` reaches one more: ceil((dropped + 1) * perPercent / drain).
        let target = (dropped + 1).multipliedSaturating(by: perPercent)
        let needed = target / drainMilliPercent + (target % drainMilliPercent == 0 ? 0 : 1)
        let remaining = max(1, needed.subtractingSaturating(consumedStreamMs))
        let n = Int64(streams)
        return now.addingSaturating(remaining / n + (remaining % n == 0 ? 0 : 1))
    }
}

extension PowerMachine {
    /// Video streams being sent changed (links that stream video; two streams drain twice as
    /// fast: "per stream minute"). A device sending video is not idle.
    public mutating func streamsChanged(count: Int, now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        battery.account(now: now)
        battery.streams = max(0, count)
        var effects = settleBattery(now: now)
        effects += rearmDrain(now: now)
        if state == .awake { effects += restartIdle(now: now) }
        return effects
    }

    /// The operator set the battery (control API): DP 145 becomes `percent` (0-100) and drains
    /// from there. Falling to or below the threshold from above reports low battery; rising above
    /// it re-arms the alert.
    public mutating func setBattery(percent: Int, now: Int64) -> [PowerEffect] {
        guard !isShutDown else { return [] }
        battery.account(now: now)
        battery.base = min(max(percent, 0), 100)
        battery.consumedStreamMs = 0
        return settleBattery(now: now) + rearmDrain(now: now)
    }

    /// DP 147 changed (an app's protocol 5; `DPSetOutcome.changed` holds 147): the alert is armed
    /// again when the battery is above the new threshold. No alert from the change itself: the
    /// alert is the battery falling (8.4: "crossing DP 147 from above").
    public mutating func lowBatteryThresholdChanged(to threshold: Int) {
        battery.threshold = min(max(threshold, 0), 100)
        battery.lowArmed = battery.reported > battery.threshold
    }

    /// The drain timer: a whole percent is due.
    mutating func drainDue(now: Int64) -> [PowerEffect] {
        battery.account(now: now)
        return settleBattery(now: now) + rearmDrain(now: now)
    }

    /// Reports a whole-percent change of DP 145 and, crossing the threshold from above, DP 212
    /// `ipc_low_battery` once (8.4).
    mutating func settleBattery(now: Int64) -> [PowerEffect] {
        let level = battery.level
        guard level != battery.reported else { return [] }
        battery.reported = level
        var crossed = false
        if level <= battery.threshold {
            crossed = battery.lowArmed
            battery.lowArmed = false
        } else {
            battery.lowArmed = true
        }
        var entries: [DPEntry] = []
        if config.dpIds.contains(DataPointCatalogue.battery) {
            entries.append(DPEntry(id: DataPointCatalogue.battery, value: .int(Int64(level))))
        }
        if crossed, config.dpIds.contains(DataPointCatalogue.initiativeMessage) {
            entries.append(DPEntry(id: DataPointCatalogue.initiativeMessage, value: DPAlert.lowBattery(t: now / 1000)))
        }
        var effects: [PowerEffect] = entries.isEmpty ? [] : [.report(entries)]
        effects.append(.battery(percent: level))
        if crossed { effects.append(.lowBattery(percent: level)) }
        return effects
    }

    mutating func rearmDrain(now: Int64) -> [PowerEffect] {
        guard let at = battery.nextDrop(after: now) else { return cancel(drainTimer) }
        if dueTime(of: .batteryDrain) == at { return [] }
        return [arm(drainTimer, at: at)]
    }
}
