import IPCWire
import Testing
@testable import CallEngine

let powerDev = "door-battery-1"

func batteryConfig(lowPower: Bool = true, sleepAfterMs: Int64 = 180_000, wakeLatencyMs: Int64 = 1000,
                   onBattery: Bool = true, battery: Int = 100, drain: Double = 1, threshold: Int = 20,
                   dps: Set<DPId> = Set(DataPointCatalogue.ids)) -> PowerConfig {
    PowerConfig(devId: powerDev, lowPower: lowPower, sleepAfterMs: sleepAfterMs, wakeLatencyMs: wakeLatencyMs,
                onBattery: onBattery, battery: battery, drainPerStreamMinute: drain, lowBatteryThreshold: threshold,
                dpIds: dps)
}

/// Sleep and wake, PROTOCOL.md 8.4, clause by clause, on simulated time.
@Suite("Power machine: sleep and wake (PROTOCOL.md 8.4)")
struct PowerSleepWakeTests {
    @Test("8.4 'After power.sleepAfter seconds ... with no call, link, press or DP traffic, the device reports DP 149 false and sleeps'")
    func sleepsWhenIdle() throws {
        let sim = try PowerSim(batteryConfig())
        let t0 = sim.now
        #expect(sim.due(.sleepAfter) == t0 + 180_000)
        sim.advance(179_999)
        #expect(sim.machine.state == .awake)
        #expect(sim.reports.isEmpty)
        sim.advance(1)
        #expect(sim.machine.state == .asleep)
        #expect(sim.events(since: t0) == [.report([DPEntry(id: 149, value: .bool(false))]), .fellAsleep])
        #expect(sim.store.value(149) == .bool(false))
        // Asleep it stays asleep: no timer left, nothing more happens for hours.
        sim.advance(10 * 3_600_000)
        #expect(sim.events(since: t0).count == 2)
        #expect(sim.due(.sleepAfter) == nil)
    }

    @Test("8.4: traffic restarts the idle time; an open call or link, or video sent, holds the device awake")
    func activityHoldsAwake() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 60_000))
        let t0 = sim.now
        sim.advance(50_000)
        #expect(sim.receive(5, setting: [(key: "134", value: .bool(false))]) == .serve)   // DP traffic
        sim.advance(50_000)
        sim.press()                                                                        // a press
        sim.advance(59_999)
        #expect(sim.machine.state == .awake)
        sim.activity()                                                                     // the device's own traffic
        sim.sessions(1)                                                                    // a call rings
        #expect(sim.due(.sleepAfter) == nil)
        sim.advance(3_600_000)
        #expect(sim.machine.state == .awake)
        sim.sessions(0)                                                                    // it ended
        let ended = sim.now
        #expect(sim.due(.sleepAfter) == ended + 60_000)
        sim.streams(1)                                                                     // live view sends video
        sim.advance(600_000)
        #expect(sim.machine.state == .awake)
        sim.streams(0)
        sim.advance(59_999)
        #expect(sim.machine.state == .awake)
        sim.advance(1)
        #expect(sim.machine.state == .asleep)
        #expect(sim.reported(149).map(\.value) == [.bool(false)])
        #expect(sim.reported(149).first?.at == t0 + 50_000 + 50_000 + 59_999 + 3_600_000 + 600_000 + 60_000)
    }

    @Test("8.4 'drops, counted, every 302, 308, 309, 312, 5 and 31 message' while asleep (and while waking); others are served")
    func dropsWhileAsleep() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000))
        for p: Int64 in [302, 308, 309, 312, 5, 31, 4, 43] {
            #expect(sim.receive(p) == .serve, "\(p) awake")
            #expect(!sim.machine.shouldDrop(protocolNumber: p))
        }
        sim.advance(1000)
        #expect(sim.machine.isAsleep)
        for p: Int64 in [302, 308, 309, 312, 5, 31] {
            #expect(sim.receive(p) == .drop, "\(p) asleep")
            #expect(sim.machine.shouldDrop(protocolNumber: p))
        }
        // A dropped message is not activity and does not wake.
        #expect(sim.machine.state == .asleep)
        #expect(sim.receive(4) == .serve)
        #expect(!sim.machine.shouldDrop(protocolNumber: 46))
        sim.wake()
        #expect(sim.receive(308) == .drop)
        #expect(sim.machine.shouldDrop(protocolNumber: 302))
    }

    @Test("8.4 wake topic: after wakeLatency the device reports DP 149 true and every DP, and serves; meta follows")
    func wakeByTopic() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000, wakeLatencyMs: 1000))
        sim.advance(1000)
        #expect(!sim.machine.isAwake)
        sim.advance(10)
        let asked = sim.now
        sim.wake()
        #expect(sim.machine.state == .waking(until: asked + 1000))
        #expect(sim.events(since: asked) == [.waking(until: asked + 1000)])
        sim.advance(999)
        #expect(sim.receive(309) == .drop)
        sim.advance(1)
        #expect(sim.machine.state == .awake)
        #expect(sim.machine.isAwake)
        #expect(sim.events(since: asked + 1) == [.reportAll(setting: [DPEntry(id: 149, value: .bool(true))]),
                                                .wokeUp(latencyMs: 1000)])
        let last = try #require(sim.reports.last)
        #expect(last.at == asked + 1000)
        #expect(last.dps == sim.store.all)
        #expect(last.dps.map(\.id) == DataPointCatalogue.ids)
        #expect(sim.store.value(149) == .bool(true))
        #expect(sim.receive(309) == .serve)
        // And it sleeps again after the idle time.
        #expect(sim.due(.sleepAfter) == sim.now + 1000)
    }

    @Test("8.4: a wake while waking does not restart the wait; a wake while awake is activity")
    func wakeWhileWaking() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 5000, wakeLatencyMs: 2000))
        sim.advance(5000)
        let asked = sim.now
        sim.wake()
        sim.advance(1500)
        sim.wake()
        #expect(sim.machine.state == .waking(until: asked + 2000))
        sim.advance(500)
        #expect(sim.machine.isAwake)
        #expect(sim.events(since: asked).filter { if case .wokeUp = $0 { true } else { false } } == [.wokeUp(latencyMs: 2000)])
        sim.advance(4000)
        sim.wake()
        #expect(sim.due(.sleepAfter) == sim.now + 5000)
    }

    @Test("8.4: a protocol 5 setting DP 149 true wakes; its other DPs are applied once awake; any other 5 is dropped")
    func wakeByDataPoint() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000, wakeLatencyMs: 1000))
        sim.advance(1000)
        #expect(sim.receive(5, setting: [(key: "134", value: .bool(false))]) == .drop)
        #expect(sim.receive(5, setting: [(key: "149", value: .bool(false))]) == .drop)
        #expect(sim.receive(5, setting: [(key: "149", value: .string("true"))]) == .drop)
        #expect(sim.machine.state == .asleep)
        let asked = sim.now
        #expect(sim.receive(5, setting: [(key: "147", value: .int(30)), (key: "149", value: .bool(true))], from: "u2")
                == .heldForWake)
        // Not applied while waking.
        #expect(sim.store.value(147) == .int(20))
        #expect(sim.receive(5, setting: [(key: "149", value: .bool(true)), (key: "150", value: .bool(false))], from: "u3")
                == .heldForWake)
        #expect(sim.machine.state == .waking(until: asked + 1000))
        sim.advance(1000)
        let awakeReports = sim.reports.filter { $0.at == asked + 1000 }
        // First 149 true and every DP, then each held command's echo, as if it came then.
        #expect(awakeReports.count == 3)
        #expect(awakeReports[0].dps == DataPointStore.withValues(sim.store, except: [147: .int(20), 150: .bool(true)]))
        #expect(awakeReports[1].dps == [DPEntry(id: 147, value: .int(30)), DPEntry(id: 149, value: .bool(true))])
        #expect(awakeReports[2].dps == [DPEntry(id: 149, value: .bool(true)), DPEntry(id: 150, value: .bool(false))])
        #expect(sim.store.value(147) == .int(30))
        #expect(sim.store.value(150) == .bool(false))
        guard case .applyHeld(let held) = sim.events(since: asked + 1000)[2] else {
            Issue.record("no applyHeld after the wake: \(sim.events(since: asked + 1000))")
            return
        }
        #expect(held.map(\.uid) == ["u2", "u3"])
        #expect(held.map(\.receivedAt) == [asked, asked])
    }

    @Test("8.4 'A press wakes the device at once (no latency)', asleep or waking")
    func pressWakesAtOnce() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000, wakeLatencyMs: 3000))
        sim.advance(1000)
        sim.advance(10)
        let pressed = sim.now
        sim.press()
        #expect(sim.machine.isAwake)
        #expect(sim.events(since: pressed) == [.reportAll(setting: [DPEntry(id: 149, value: .bool(true))]),
                                               .wokeUp(latencyMs: 0)])
        sim.advance(1000)
        #expect(sim.machine.state == .asleep)
        sim.wake()
        sim.advance(1000)
        let pressedWhileWaking = sim.now
        sim.press()
        #expect(sim.machine.isAwake)
        #expect(sim.due(.wakeLatency) == nil)
        sim.advance(999)
        // The cancelled wake timer never completes a second wake.
        let wokeUps = sim.events(since: pressedWhileWaking).filter { if case .wokeUp = $0 { true } else { false } }
        #expect(wokeUps == [.wokeUp(latencyMs: 0)])
    }

    @Test("8.4: a device with lowPower false never sleeps, never drops, ignores wakes")
    func notLowPower() throws {
        let sim = try PowerSim(batteryConfig(lowPower: false, onBattery: false))
        #expect(sim.due(.sleepAfter) == nil)
        sim.advance(24 * 3_600_000)
        #expect(sim.machine.isAwake)
        sim.wake()
        sim.press()
        #expect(sim.receive(308) == .serve)
        #expect(sim.events(since: 0).isEmpty)
    }

    @Test("a zero wake latency wakes at once; a device without DP 149 reports nothing for it")
    func zeroLatencyAndNoAwakeDP() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000, wakeLatencyMs: 0, dps: [145]))
        sim.advance(1000)
        #expect(sim.events(since: 0) == [.fellAsleep])
        sim.advance(10)
        let at = sim.now
        sim.wake()
        #expect(sim.machine.isAwake)
        #expect(sim.events(since: at) == [.reportAll(setting: []), .wokeUp(latencyMs: 0)])
    }

    @Test("stale and foreign timers change nothing; shutdown cancels every timer and ends the machine")
    func staleAndShutdown() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 10_000))
        var m = sim.machine
        #expect(m.timerFired(CallTimer(.sleepAfter, sessionId: powerDev), now: sim.now + 5000).isEmpty)
        #expect(m.state == .awake)
        #expect(m.timerFired(CallTimer(.sleepAfter, sessionId: "other"), now: sim.now + 20_000).isEmpty)
        #expect(m.timerFired(CallTimer(.wakeLatency, sessionId: powerDev), now: sim.now + 20_000).isEmpty)
        _ = m.streamsChanged(count: 1, now: sim.now)
        let cancelled = m.shutdown()
        #expect(cancelled == [.cancelTimer(CallTimer(.batteryDrain, sessionId: powerDev))])
        #expect(m.shutdown().isEmpty)
        #expect(m.wakeRequest(now: sim.now).isEmpty)
        #expect(m.press(now: sim.now).isEmpty)
        #expect(m.receive(protocolNumber: 308, now: sim.now) == PowerVerdict(.drop))
        let sim2 = try PowerSim(batteryConfig(sleepAfterMs: 10_000))
        var m2 = sim2.machine
        #expect(m2.shutdown() == [.cancelTimer(CallTimer(.sleepAfter, sessionId: powerDev))])
        #expect(m2.timerFired(CallTimer(.sleepAfter, sessionId: powerDev), now: sim2.now + 10_000).isEmpty)
    }

    @Test("held commands are bounded: past the limit a 149-true set is dropped")
    func heldBound() throws {
        let sim = try PowerSim(batteryConfig(sleepAfterMs: 1000, wakeLatencyMs: 5000))
        sim.advance(1000)
        let set: [(key: String, value: JSONValue)] = [(key: "149", value: .bool(true))]
        for _ in 0..<PowerMachine.heldLimit { #expect(sim.receive(5, setting: set) == .heldForWake) }
        #expect(sim.receive(5, setting: set) == .drop)
    }
}

extension DataPointStore {
    /// The store's report with some DPs at other values (what it said before held commands).
    static func withValues(_ store: DataPointStore, except: [DPId: DPValue]) -> [DPEntry] {
        store.all.map { DPEntry(id: $0.id, value: except[$0.id] ?? $0.value) }
    }
}

@Suite("Wake topic payload (PROTOCOL.md 8.4)")
struct PowerWakeCheckTests {
    @Test("the payload is the localKey's CRC32, 4 bytes big-endian; anything else is no wake")
    func payload() {
        let key = Array("0123456789abcdef".utf8)
        let crc = CRC32.checksum(key)
        let expected: [UInt8] = [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        #expect(WakeCheck.payload(localKey: key) == expected)
        // A known vector: CRC32("123456789") = 0xCBF43926.
        #expect(WakeCheck.payload(localKey: Array("123456789".utf8)) == [0xCB, 0xF4, 0x39, 0x26])
        #expect(WakeCheck.isWake(expected, localKey: key))
        #expect(!WakeCheck.isWake(expected.reversed(), localKey: key))
        #expect(!WakeCheck.isWake(expected + [0], localKey: key))
        #expect(!WakeCheck.isWake([], localKey: key))
        #expect(!WakeCheck.isWake(WakeCheck.payload(localKey: Array("0123456789abcdeF".utf8)), localKey: key))
        #expect(WakeCheck.topic(devId: "door-1") == "m/w/door-1")
    }
}
