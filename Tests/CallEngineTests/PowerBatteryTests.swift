import IPCWire
import Testing
@testable import CallEngine

/// The battery of PROTOCOL.md 8.4: "DP 145 starts at power.battery (default 100) and falls by
/// power.drainPerStreamMinute (default 1) per minute of video sent, reported at each whole-percent
/// change; crossing DP 147 (default 20) from above reports DP 212 ipc_low_battery once."
@Suite("Power machine: battery (PROTOCOL.md 8.4)")
struct PowerBatteryTests {
    @Test("one stream: DP 145 falls 1 percent per minute of video, reported at each whole percent, exactly on the minute")
    func drainOneStream() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false))
        let t0 = sim.now
        sim.streams(1)
        #expect(sim.due(.batteryDrain) == t0 + 60_000)
        sim.advance(59_999)
        #expect(sim.reported(145).isEmpty)
        sim.advance(1)
        #expect(sim.reported(145).map(\.value) == [.int(99)])
        sim.advance(9 * 60_000)
        #expect(sim.reported(145).map(\.value) == (90...99).reversed().map { .int(Int64($0)) })
        #expect(sim.reported(145).map(\.at) == (1...10).map { t0 + Int64($0) * 60_000 })
        #expect(sim.store.value(145) == .int(90))
        #expect(sim.machine.batteryPercent == 90)
        // Video stops: no more drain.
        sim.advance(30_000)
        sim.streams(0)
        #expect(sim.due(.batteryDrain) == nil)
        sim.advance(3_600_000)
        #expect(sim.reported(145).count == 10)
        // Part minutes add up: the half minute before the stop plus a half minute now.
        sim.streams(1)
        sim.advance(29_999)
        #expect(sim.reported(145).count == 10)
        sim.advance(1)
        #expect(sim.reported(145).last?.value == .int(89))
    }

    @Test("'per stream minute': two streams drain twice as fast; a fractional rate lands on exact milliseconds")
    func drainRates() throws {
        let two = try PowerSim(batteryConfig(lowPower: false))
        two.streams(2)
        two.advance(30_000)
        #expect(two.reported(145).map(\.value) == [.int(99)])
        let slow = try PowerSim(batteryConfig(lowPower: false, drain: 0.5))
        let t0 = slow.now
        slow.streams(1)
        slow.advance(240_000)
        #expect(slow.reported(145).map(\.at) == [t0 + 120_000, t0 + 240_000])
        let odd = try PowerSim(batteryConfig(lowPower: false, drain: 7))
        let t1 = odd.now
        odd.streams(1)
        odd.advance(60_000)
        // 60000/7 = 8571.43 ms per percent: drops at ceil(k * 60000 / 7).
        #expect(odd.reported(145).map(\.at) == (1...7).map { t1 + Int64((Double($0) * 60_000 / 7).rounded(.up)) })
        #expect(odd.store.value(145) == .int(93))
    }

    @Test("only 'power.source: battery' drains; an empty battery stays at 0")
    func adapterAndEmpty() throws {
        let adapter = try PowerSim(batteryConfig(lowPower: false, onBattery: false))
        adapter.streams(3)
        #expect(adapter.due(.batteryDrain) == nil)
        adapter.advance(3_600_000)
        #expect(adapter.reported(145).isEmpty)
        let low = try PowerSim(batteryConfig(lowPower: false, battery: 2, threshold: 0))
        low.streams(1)
        low.advance(10 * 60_000)
        #expect(low.reported(145).map(\.value) == [.int(1), .int(0)])
        #expect(low.due(.batteryDrain) == nil)
        #expect(low.events(since: 0).contains(.lowBattery(percent: 0)))
    }

    @Test("crossing DP 147 from above reports DP 212 ipc_low_battery once, with DP 145 in the same report")
    func lowBatteryOnce() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false, battery: 22))
        let t0 = sim.now
        sim.streams(1)
        sim.advance(60_000)   // 21
        #expect(sim.reported(212).isEmpty)
        sim.advance(60_000)   // 20: crossed
        let alerts = sim.reported(212)
        #expect(alerts.count == 1)
        #expect(alerts.first?.at == t0 + 120_000)
        let json = try #require(alerts.first.flatMap { DPAlert.decode($0.value) })
        #expect(json == .object(["cmd": .string("ipc_low_battery"), "type": .string("none"), "files": .array([]),
                                 "t": .int((t0 + 120_000) / 1000)]))
        #expect(sim.reports.last?.dps.map(\.id) == [145, 212])
        #expect(sim.events(since: t0 + 120_000).contains(.lowBattery(percent: 20)))
        sim.advance(5 * 60_000)   // 15: still below, no second alert
        #expect(sim.reported(212).count == 1)
        #expect(sim.store.value(145) == .int(15))
    }

    @Test("re-armed when the battery is above the threshold again (operator sets it), or the threshold moves below it")
    func reArmed() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false, battery: 21))
        sim.streams(1)
        sim.advance(60_000)
        #expect(sim.reported(212).count == 1)
        sim.setBattery(50)
        #expect(sim.reported(145).last?.value == .int(50))
        #expect(sim.reported(212).count == 1)
        sim.setBattery(10)
        #expect(sim.reported(212).count == 2)
        // A setting at or below the threshold from below is no new crossing.
        sim.setBattery(12)
        #expect(sim.reported(212).count == 2)
        // The app lowers DP 147 below the level: armed again, no alert from the change itself.
        sim.machine.lowBatteryThresholdChanged(to: 11)
        #expect(sim.reported(212).count == 2)
        sim.advance(60_000)   // 11
        #expect(sim.reported(212).count == 3)
        // Raising the threshold above the level does not alert either.
        sim.setBattery(30)
        sim.machine.lowBatteryThresholdChanged(to: 40)
        sim.advance(60_000)
        #expect(sim.reported(212).count == 3)
    }

    @Test("a battery that starts at or below the threshold never crossed it: no alert")
    func startsLow() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false, battery: 15))
        sim.streams(1)
        sim.advance(5 * 60_000)
        #expect(sim.reported(145).count == 5)
        #expect(sim.reported(212).isEmpty)
    }

    @Test("a device without DP 145 or 212 drains silently but still tells the glue")
    func withoutBatteryDPs() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false, battery: 21, dps: [149]))
        sim.streams(1)
        sim.advance(60_000)
        #expect(sim.reports.isEmpty)
        #expect(sim.events(since: 0) == [.battery(percent: 20), .lowBattery(percent: 20)])
    }

    @Test("a battery doorbell streaming for a minute stays awake and drains; then sleeps after the idle time")
    func drainThenSleep() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 30_000))
        sim.streams(1)
        sim.advance(60_000)
        #expect(sim.machine.isAwake)
        #expect(sim.store.value(145) == .int(99))
        sim.streams(0)
        sim.advance(30_000)
        #expect(sim.machine.state == .asleep)
        #expect(sim.reported(149).map(\.value) == [.bool(false)])
    }
}
