import CallEngine
import CallRuntime
import IPCWire
import MQTTTransport

/// Sleep, wake and battery on the device (PROTOCOL.md 8.4): the `PowerMachine` decides, this
/// carries out its effects (DP reports, the retained meta's `awake`, timers) and feeds it what
/// happens (messages, the wake topic, presses, calls and links, video streams).
extension Device {
    /// Awake, asleep or waking (PROTOCOL.md 8.4).
    public var powerState: PowerState { power.state }

    /// The battery's whole percent now (DP 145).
    public var batteryPercent: Int { power.batteryPercent }

    /// PROTOCOL.md 8.4: asleep, "it drops, counted, every 302, 308, 309, 312, 5 and 31 message"; a
    /// protocol 5 setting DP 149 to true wakes it and is applied once awake. Awake, every message
    /// is activity. Returns whether to serve the message now.
    func admitWhileAsleep(_ inbound: InboundMessage) -> Bool {
        var setting: [(key: String, value: JSONValue)]?
        var uid = ""
        if case .dpSet(let set) = inbound {
            setting = set.dps
            uid = set.uid
        }
        let verdict = power.receive(protocolNumber: inbound.protocolNumber.rawValue, setting: setting, from: uid,
                                    now: clock.nowMs())
        runPower(verdict.effects)
        switch verdict.disposition {
        case .serve:
            return true
        case .drop:
            doorbellCounters.droppedWhileAsleep += 1
            refuse("dropped a protocol \(inbound.protocolNumber.rawValue) message: the device is asleep", kind: .asleep)
            return false
        case .heldForWake:
            log.log(.info, "<- 5 set with DP 149 true: waking", device: devId, fields: [("from", uid)])
            return false
        }
    }

    /// A payload on `m/w/{devId}` (PROTOCOL.md 8.4): the CRC32 of the localKey wakes the device;
    /// anything else is ignored and counted.
    func receiveWake(payload: [UInt8]) {
        guard WakeCheck.isWake(payload, localKey: Array(profile.identity.localKey.utf8)) else {
            doorbellCounters.badWakes += 1
            refuse("ignored a \(payload.count)-byte payload on \(wakeTopic): not the CRC32 of the localKey", kind: .wake)
            return
        }
        log.log(.info, "<- wake", device: devId, fields: [("state", "\(power.state)")])
        runPower(power.wakeRequest(now: clock.nowMs()))
    }

    /// Wakes the device as the wake topic would (the control API, a scenario).
    public func wake() { runPower(power.wakeRequest(now: clock.nowMs())) }

    /// Sets the battery (the control API, a scenario): DP 145, and the low-battery alert when it
    /// crosses DP 147 from above.
    public func setBattery(percent: Int) {
        runPower(power.setBattery(percent: percent, now: clock.nowMs()))
    }

    /// Carries out the power machine's effects, in order.
    func runPower(_ effects: [PowerEffect]) {
        for effect in effects {
            switch effect {
            case .armTimer(let timer, let at):
                powerTimers.arm(timer, atMs: at, nowMs: clock.nowMs(), fire: powerTimerFire)
            case .cancelTimer(let timer):
                powerTimers.cancel(timer)
            case .report(let entries):
                reportDataPoints(setting: entries)
            case .reportAll(let setting):
                for entry in setting { _ = try? dataPoints.deviceSet(entry.id, entry.value) }
                reportAllDataPoints()
            case .fellAsleep:
                log.log(.info, "asleep", device: devId)
                publishMeta()
                emit(.fellAsleep)
            case .waking(let until):
                log.log(.info, "waking", device: devId, fields: [("inMs", String(until.subtractingReportingOverflow(clock.nowMs()).partialValue))])
            case .wokeUp(let latencyMs):
                doorbellCounters.wakes += 1
                log.log(.info, "awake", device: devId, fields: [("latencyMs", String(latencyMs))])
                publishMeta()
                emit(.wokeUp(latencyMs: latencyMs))
            case .applyHeld(let held):
                for set in held { apply(set.dps, from: set.uid) }
            case .battery(let percent):
                log.log(.debug, "battery", device: devId, fields: [("percent", String(percent))])
            case .lowBattery(let percent):
                log.log(.warning, "low battery", device: devId, fields: [("percent", String(percent))])
            }
        }
    }

    /// Video streams sent changed: the battery drains per stream minute (8.4).
    func noteStreamsChanged() {
        let streaming = links.count
        runPower(power.streamsChanged(count: streaming, now: clock.nowMs()))
    }

    private func powerTimerFired(_ timer: CallTimer) {
        powerTimers.fired(timer)
        runPower(power.timerFired(timer, now: clock.nowMs()))
    }

    /// What a due power timer calls: back onto this actor.
    private nonisolated var powerTimerFire: @Sendable (CallTimer) async -> Void {
        { [weak self] timer in await self?.powerTimerFired(timer) }
    }
}
