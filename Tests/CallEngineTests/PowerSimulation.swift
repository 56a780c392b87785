import IPCWire
@testable import CallEngine

/// Drives a `PowerMachine` on a virtual clock, the way the glue does: timers fire exactly when due
/// (a re-armed timer replaces the old one, a cancelled one never fires), `.report`/`.reportAll`
/// effects are written into a real `DataPointStore` and kept as the protocol 4 messages sent.
final class PowerSim {
    private(set) var now: Int64
    var machine: PowerMachine
    var store: DataPointStore
    /// Every effect, with when it came.
    private(set) var effects: [(at: Int64, effect: PowerEffect)] = []
    /// The protocol 4 reports sent, in order.
    private(set) var reports: [(at: Int64, dps: [DPEntry])] = []
    private var armed: [CallTimer: Int64] = [:]

    init(_ config: PowerConfig, start: Int64 = 1_732_200_000_000) throws {
        now = start
        machine = PowerMachine(config: config)
        var startValues: [DPId: DPValue] = [:]
        if config.dpIds.contains(145) { startValues[145] = .int(Int64(config.battery)) }
        if config.dpIds.contains(147) { startValues[147] = .int(Int64(config.lowBatteryThreshold)) }
        store = try DataPointStore(ids: Array(config.dpIds), startValues: startValues)
        take(machine.start(now: now))
    }

    /// Carries out effects as the glue would.
    func take(_ list: [PowerEffect]) {
        for effect in list {
            effects.append((now, effect))
            switch effect {
            case .armTimer(let timer, let at): armed[timer] = at
            case .cancelTimer(let timer): armed[timer] = nil
            case .report(let entries):
                for e in entries { _ = try? store.deviceSet(e.id, e.value) }
                reports.append((now, entries))
            case .reportAll(let setting):
                for e in setting { _ = try? store.deviceSet(e.id, e.value) }
                reports.append((now, store.all))
            case .applyHeld(let sets):
                for held in sets {
                    let outcome = store.applySet(held.dps, from: held.uid)
                    if !outcome.report.isEmpty { reports.append((now, outcome.report)) }
                }
            case .fellAsleep, .waking, .wokeUp, .battery, .lowBattery:
                break
            }
        }
    }

    func due(_ kind: CallTimer.Kind) -> Int64? { armed[CallTimer(kind, sessionId: machine.config.devId)] }

    /// Advances the clock by `ms`, firing every timer due on the way, in time order.
    func advance(_ ms: Int64) {
        let end = now + ms
        while let next = armed.min(by: { ($0.value, $0.key.kind.rawValue) < ($1.value, $1.key.kind.rawValue) }),
              next.value <= end {
            now = max(now, next.value)
            armed[next.key] = nil
            take(machine.timerFired(next.key, now: now))
        }
        now = end
    }

    func receive(_ protocolNumber: Int64, setting dps: [(key: String, value: JSONValue)]? = nil,
                 from uid: String = "u1") -> PowerVerdict.Disposition {
        let verdict = machine.receive(protocolNumber: protocolNumber, setting: dps, from: uid, now: now)
        take(verdict.effects)
        return verdict.disposition
    }

    func wake() { take(machine.wakeRequest(now: now)) }
    func press() { take(machine.press(now: now)) }
    func activity() { take(machine.activity(now: now)) }
    func sessions(_ n: Int) { take(machine.sessionsChanged(open: n, now: now)) }
    func streams(_ n: Int) { take(machine.streamsChanged(count: n, now: now)) }
    func setBattery(_ p: Int) { take(machine.setBattery(percent: p, now: now)) }

    /// Effects since `at` (inclusive) that are not timer bookkeeping.
    func events(since at: Int64) -> [PowerEffect] {
        effects.filter { $0.at >= at }.map(\.effect).filter {
            switch $0 {
            case .armTimer, .cancelTimer: false
            default: true
            }
        }
    }

    /// The reports that carried DP `id`, with its value.
    func reported(_ id: DPId) -> [(at: Int64, value: DPValue)] {
        reports.compactMap { r in r.dps.first(where: { $0.id == id }).map { (r.at, $0.value) } }
    }
}
