import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport
import Testing
import TestSupport

/// Fleets of battery doorbells (PROTOCOL.md 8.4; issue 20 item 9): they sleep after their
/// `sleepAfter`, are woken at random (wake storms), and their power timers live in the fleet's one
/// timer heap.
@Suite("Fleets of doorbells: sleep, wake storms", .serialized, .timeLimit(.minutes(8)), .heavy)
struct DoorbellFleetTests {
    static let template = packageRootPath + "/device-profiles/battery-doorbell-fleet.yaml"

    @Test("30 battery doorbells sleep after sleepAfter (their idle timers in the fleet's heap); a wake storm wakes 10 after wakeLatency; they sleep again")
    func sleepAndWakeStorm() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let profile = try DeviceProfile.load(path: Self.template)
        let plan = try FleetPlan(groups: [.init(profile: profile, count: 30)])
        let fleet = try Fleet(plan: plan, positions: 0..<30, options: Fleet.Options(
            connection: broker.clientOptions(clientID: "fleet"), sleepAfter: 1.5, wakeLatency: 0.25))
        let report = await fleet.start()
        #expect(report.online == 30, "\(report)")
        // Awake: each device's idle timer is armed in the fleet's one scheduler, not a timer of its own.
        let awake = await fleet.powerCounts()
        #expect(awake.lowPower == 30)
        #expect(awake.awake + awake.asleep == 30)
        if awake.asleep == 0 { #expect(fleet.timers.pendingCount >= 30, "the devices' idle timers are not in the fleet's heap") }

        #expect(await eventually(timeout: .seconds(10)) { await fleet.powerCounts().asleep == 30 })
        let idle = fleet.timers.pendingCount

        let storm = await fleet.wakeRandom(10)
        #expect(storm == FleetWakeReport(woken: 10, wereAsleep: 10, lowPowerDevices: 30))
        let during = await fleet.powerCounts()
        #expect(during.waking + during.awake == 10 && during.asleep == 20, "\(during)")
        #expect(await eventually(timeout: .seconds(10)) { fleet.wakeSummary.completed == 10 })
        let summary = fleet.wakeSummary
        #expect(summary.requested == 10)
        let p50 = try #require(summary.p50Ms)
        let p99 = try #require(summary.p99Ms)
        #expect(p50 >= 240 && p99 < 250 + 500, "wake latency p50 \(p50) ms, p99 \(p99) ms against 250 ms")

        // They sleep again; the timers they armed are gone from the heap (none grows per wake).
        #expect(await eventually(timeout: .seconds(10)) { await fleet.powerCounts().asleep == 30 })
        #expect(fleet.timers.pendingCount <= idle, "timers left behind: \(fleet.timers.pendingCount) > \(idle)")

        // More than the fleet holds: every device once.
        #expect(await fleet.wakeRandom(1000).woken == 30)
        #expect(await fleet.wakeRandom(0).woken == 0)
        await fleet.stop()
    }

    @Test("ipcemu fleet --sleep-after: power lines count asleep devices; fleet-faults --wake N and --wake-rate wake them through the control API, timed by the fleet")
    func fleetFaultsWake() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let port = try freeLoopbackPort()
        let fleet = try IPCEmuProcess(["fleet", "--profile", "\(Self.template):40", "--broker", broker.url, "--json",
                                       "--sleep-after", "1", "--wake-latency", "0.2",
                                       "--control", "127.0.0.1:\(port)", "--log-level", "info"])
        #expect(await fleet.waitFor("control API", timeout: .seconds(60)), "stdout: \(fleet.stdout)\nstderr: \(fleet.stderr)")
        #expect(await fleet.waitFor(#""event":"online""#, timeout: .seconds(60)))
        let online = try #require(jsonEvents(fleet.stdout).first { $0["event"] as? String == "online" })
        #expect(online["lowPower"] as? Int == 40)
        #expect(await eventually(timeout: .seconds(15)) {
            jsonEvents(fleet.stdout).contains { $0["event"] as? String == "power" && $0["asleep"] as? Int == 40 }
        }, "no power line with 40 asleep: \(fleet.stdout)")

        let url = "http://127.0.0.1:\(port)"
        let storm = try await CLIRun.ipcemu(["fleet-faults", "--control", url, "--wake", "15"])
        #expect(storm.status == 0, "\(storm.stderr)")
        #expect(storm.stdout.contains(#""wereAsleep":15"#) && storm.stdout.contains(#""woken":15"#), "\(storm.stdout)")
        #expect(await fleet.waitFor("wake storm done", inStderr: true, timeout: .seconds(10)), "stderr: \(fleet.stderr)")
        #expect(fleet.stderr.contains("fleet fault: waking random devices"))

        let rate = try await CLIRun.ipcemu(["fleet-faults", "--control", url, "--wake-rate", "20", "--seconds", "1"])
        #expect(rate.status == 0, "\(rate.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(rate.stdout.utf8)) as? [String: Any], "\(rate.stdout)")
        #expect(result["woken"] as? Int == 20, "\(rate.stdout)")
        let state = try #require(result["fleet"] as? [String: Any])
        #expect(state["wakesRequested"] as? Int == 35, "\(state)")
        #expect((state["wakesCompleted"] as? Int ?? 0) >= 15, "\(state)")
        let p50 = try #require(state["wakeLatencyP50Ms"] as? Double)
        #expect(p50 >= 190 && p50 < 700, "p50 \(p50) ms against a wakeLatency of 200 ms")
        #expect((state["asleep"] as? Int ?? 0) + (state["awake"] as? Int ?? 0) + (state["waking"] as? Int ?? 0) == 40)

        let bad = try await CLIRun.ipcemu(["fleet-faults", "--control", url, "--wake", "-1"])
        #expect(bad.status != 0 && bad.stderr.contains("--wake"), "\(bad.stderr)")

        fleet.signal(SIGTERM)
        #expect(await fleet.waitForExit(timeout: .seconds(10)) == 0)
    }
}
