import AppSimulator
import ArgumentParser
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import WebRTCLink
import Synchronization

/// `ipcemu bench doorbell`: the doorbell figures of PROTOCOL.md 8 (issue 20 "Done when"), measured
/// as the app sees them, on a private mosquitto: press -> 43, wake -> DP 149 true, accept -> first
/// decoded frame after a wake (one device and one app user in this process), and a fleet of
/// battery doorbells in its own process woken at a steady rate (docs/doorbells.md "Timings and
/// benchmarks").
extension BenchCommand {
    struct Doorbell: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "doorbell",
            abstract: "Measure doorbell presses, wakes, accept -> first frame, and a fleet's wake storm.",
            discussion: """
                Starts a private mosquitto. One device from --profile (its household: the bench's user; \
                left messages off; sleeps after --sleep-after) and one app user, in this process: \
                (a) --presses presses, each timed from the press to the app's 43 and declined; \
                (b) --wakes wakes of the sleeping device over m/w/{devId}, each timed to DP 149 true as \
                the app sees it (against the profile's wakeLatency); (c) --first-frames rounds of wake, \
                press, accept, each timed from the accept to the first decoded video frame. \
                (d) With --fleet N: `ipcemu fleet` of N devices of --fleet-profile in its own process \
                (sleeping after --fleet-sleep-after), all seen asleep first, then --wakes-per-second \
                wakes to random sleeping devices for --seconds, each timed from the publish on the wake \
                topic to DP 149 true on the device's out topic. Use a release build.
                """
        )

        @Option(help: "Presses (a).") var presses: Int = 200
        @Option(help: "Wakes of the one device (b).") var wakes: Int = 30
        @Option(help: "Wake, press, accept rounds (c).") var firstFrames: Int = 10
        @Option(help: "Presses and wakes made before measuring.") var warmup: Int = 3
        @Option(help: "Profile of the one device (a doorbell kind; low-power for (b) and (c)).")
        var profile: String = "device-profiles/battery-doorbell.yaml"
        @Option(help: ArgumentHelp("Idle seconds before the one device sleeps.", valueName: "SECONDS"))
        var sleepAfter: Double = 0.3
        @Option(help: "Battery doorbells in the fleet (d); 0: no fleet phase.") var fleet: Int = 10_000
        @Option(help: "Template profile of the fleet.") var fleetProfile: String = "device-profiles/battery-doorbell-fleet.yaml"
        @Option(help: ArgumentHelp("Idle seconds before a fleet device sleeps.", valueName: "SECONDS"))
        var fleetSleepAfter: Double = 3
        @Option(help: "Wakes a second to random sleeping fleet devices (d).") var wakesPerSecond: Double = 200
        @Option(help: "Seconds of fleet wakes (d).") var seconds: Double = 20
        @Option(help: "MQTT event-loop threads of the fleet process.") var threads: Int = 2
        @Option(help: ArgumentHelp("How far above wakeLatency the fleet's wake-to-awake p99 may be.", valueName: "MS"))
        var targetMs: Double = 50
        @Flag(help: "Print the results as one JSON object.") var json = false

        func validate() throws {
            guard (0...100_000).contains(presses) else { throw ValidationError("--presses must be 0 to 100000") }
            guard (0...10_000).contains(wakes) else { throw ValidationError("--wakes must be 0 to 10000") }
            guard (0...1000).contains(firstFrames) else { throw ValidationError("--first-frames must be 0 to 1000") }
            guard (0...100).contains(warmup) else { throw ValidationError("--warmup must be 0 to 100") }
            guard sleepAfter > 0, sleepAfter <= 60 else { throw ValidationError("--sleep-after must be more than 0, at most 60") }
            guard (0...1_000_000).contains(fleet) else { throw ValidationError("--fleet must be 0 to 1000000") }
            guard fleetSleepAfter > 0, fleetSleepAfter <= 600 else {
                throw ValidationError("--fleet-sleep-after must be more than 0, at most 600")
            }
            guard wakesPerSecond > 0, wakesPerSecond <= 100_000 else {
                throw ValidationError("--wakes-per-second must be more than 0, at most 100000")
            }
            guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be more than 0, at most 3600") }
            guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1 to 64") }
            guard targetMs >= 0, targetMs.isFinite else { throw ValidationError("--target-ms must be 0 or more") }
        }

        func run() async throws {
            DescriptorBudget.raiseToHardLimit()
            let broker: MosquittoBroker
            do {
                broker = try MosquittoBroker(MosquittoBroker.Configuration(
                    maxInflightMessages: 1000, maxQueuedMessages: 0, extraConfiguration: ["max_connections -1"]))
            } catch {
                throw ValidationError("cannot start mosquitto: \(error)")
            }
            defer { broker.stop() }
            var result = DoorbellBenchResult()
            if presses + wakes + firstFrames > 0 {
                let single = try await DoorbellSingleBench(command: self, broker: broker)
                result.device = single.devId
                result.wakeLatencyMs = single.wakeLatencyMs
                do {
                    if presses > 0 { result.pressTo43 = try await single.presses(presses, warmup: warmup) }
                    if wakes > 0 { result.wakeToAwake = try await single.wakes(wakes, warmup: min(warmup, 1)) }
                    if firstFrames > 0 { result.acceptToFirstFrame = try await single.firstFrames(firstFrames) }
                } catch {
                    await single.stop()
                    throw error
                }
                await single.stop()
            }
            if fleet > 0 {
                result.fleet = try await DoorbellFleetBench(command: self, broker: broker).run()
            }
            result.broker = broker.url
            if json {
                let data = try JSONSerialization.data(withJSONObject: result.json, options: [.sortedKeys])
                say(String(decoding: data, as: UTF8.self))
            } else {
                for line in result.table(targetMs: targetMs) { say(line) }
            }
            if let f = result.fleet, f.sent > 0, f.awake == 0 { throw ExitCode(1) }
        }
    }
}

/// Everything `bench doorbell` measured.
struct DoorbellBenchResult {
    var broker = ""
    var device = ""
    var wakeLatencyMs: Double = 0
    var pressTo43: [Double]?
    var wakeToAwake: [Double]?
    var acceptToFirstFrame: [Double]?
    var fleet: DoorbellFleetResult?

    static func stats(_ samples: [Double]) -> [String: Any] {
        let p = Percentiles(samples)
        return ["n": samples.count, "p50": p.at(50), "p99": p.at(99), "max": p.sorted.last ?? 0]
    }

    var json: [String: Any] {
        var out: [String: Any] = ["broker": broker]
        if !device.isEmpty { out["device"] = device; out["wakeLatencyMs"] = wakeLatencyMs }
        if let pressTo43 { out["pressTo43Ms"] = Self.stats(pressTo43) }
        if let wakeToAwake {
            var s = Self.stats(wakeToAwake)
            s["p99OverWakeLatency"] = Percentiles(wakeToAwake).at(99) - wakeLatencyMs
            out["wakeToAwakeMs"] = s
        }
        if let acceptToFirstFrame { out["acceptToFirstFrameMs"] = Self.stats(acceptToFirstFrame) }
        if let fleet { out["fleet"] = fleet.json }
        return out
    }

    func table(targetMs: Double) -> [String] {
        func row(_ name: String, _ samples: [Double], _ note: String = "") -> String {
            let p = Percentiles(samples)
            return name.padding(toLength: 34, withPad: " ", startingAt: 0)
                + String(format: "%6d  %9.2f  %9.2f  %9.2f", samples.count, p.at(50), p.at(99), p.sorted.last ?? .nan) + note
        }
        var lines = ["bench doorbell on \(broker)" + (device.isEmpty ? "" : ", device \(device) (wakeLatency \(Int(wakeLatencyMs)) ms)"),
                     "  what".padding(toLength: 34, withPad: " ", startingAt: 0) + "     n   p50 (ms)   p99 (ms)   max (ms)"]
        if let pressTo43 { lines.append(row("  (a) press -> app sees 43", pressTo43)) }
        if let wakeToAwake {
            let over = Percentiles(wakeToAwake).at(99) - wakeLatencyMs
            lines.append(row("  (b) wake -> DP 149 true", wakeToAwake, String(format: "  p99 - wakeLatency %+.2f ms", over)))
        }
        if let acceptToFirstFrame { lines.append(row("  (c) accept -> first frame", acceptToFirstFrame)) }
        if let f = fleet {
            let over = Percentiles(f.wakeToAwake).at(99) - f.wakeLatencyMs
            let met = over <= targetMs && f.lost == 0
            lines.append(row("  (d) fleet wake -> DP 149 true", f.wakeToAwake,
                             String(format: "  p99 - wakeLatency %+.2f ms (target %.0f ms: %@)", over, targetMs, met ? "met" : "NOT met")))
            lines.append(String(format: "      fleet: %d devices online in %.2f s, all %d asleep after %.2f s; %d wakes at %.0f/s for %.0f s: %d awake, %d lost, %d skipped (no sleeping device free)",
                                f.online, f.onlineSeconds, f.asleepSeen, f.asleepSeconds, f.sent, f.rate, f.seconds, f.awake, f.lost, f.skipped))
            lines.append(String(format: "      fleet RSS %.1f KB per device at online, %.1f KB after the wakes; descriptors %d at online, %d after",
                                Double(f.rssAtOnline) / Double(max(1, f.devices)) / 1024, Double(f.rssAfter) / Double(max(1, f.devices)) / 1024,
                                f.fdsAtOnline, f.fdsAfter))
            lines.append(String(format: "      shutdown: fleet exited in %.2f s (status %d)", f.exitSeconds, f.exitStatus))
        }
        return lines
    }
}

/// Phases (a) to (c): one doorbell and one app user in this process.
final class DoorbellSingleBench: Sendable {
    let device: Device
    let app: AppUser
    let devId: String
    let wakeLatencyMs: Double
    let sleepAfter: Double
    /// When each event the bench waits for arrived (stamped on arrival, so a wait's polling adds nothing).
    private let stamps: EventStamps
    private let watchers: [Task<Void, Never>]
    private let clock = ContinuousClock()

    init(command: BenchCommand.Doorbell, broker: MosquittoBroker) async throws {
        var profile = try loadProfile(command.profile)
        if profile.isTemplate { profile = try profile.instance(index: 0) }
        guard profile.doorbell.kind != .screenIPC else {
            throw ValidationError("--profile must be a doorbell kind (doorbell.kind: doorbell or ac_doorbell)")
        }
        let user = "bench-user"
        profile.behaviour.household = [user]
        profile.doorbell.messages = false   // every press rings (no left message after a decline)
        profile.power.sleepAfter = command.sleepAfter
        if (command.wakes > 0 || command.firstFrames > 0) && !profile.power.lowPower {
            throw ValidationError("--profile must be low-power (power.lowPower: true) for --wakes and --first-frames; use 0 for both")
        }
        devId = profile.identity.devId
        wakeLatencyMs = profile.power.wakeLatency * 1000
        sleepAfter = command.sleepAfter
        let quiet = EventLog(minimumLevel: .error)
        GStreamerRuntime.preloadPlugins()
        let stamps = EventStamps()
        let device = try Device(profile: profile, connection: broker.clientOptions(clientID: profile.identity.devId), log: quiet)
        let app = try AppUser(userId: user, connection: broker.clientOptions(clientID: user), log: quiet)
        self.device = device
        self.app = app
        self.stamps = stamps
        let deviceEvents = await device.events()
        let appEvents = await app.events()
        watchers = [
            Task {
                for await e in deviceEvents { if case .callEnded(let r) = e { stamps.mark("ended:\(r.sessionId)") } }
            },
            Task {
                for await e in appEvents {
                    switch e {
                    case .doorbellPressed(let m): stamps.mark("43:\(m.edata)")
                    case .doorbellRinging(_, let callId, _): stamps.mark("ring:\(callId)")
                    default: break
                    }
                }
            },
        ]
        try await device.start()
        guard await device.waitUntilConnected(timeout: .seconds(10)) else {
            throw ValidationError("the device could not connect to \(broker.url)")
        }
        try await app.start()
        let t = profile.resolvedTopics
        try await app.add(DeviceAddress(devId: devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                                        security: profile.security, localKey: profile.identity.localKey,
                                        p2pPassword: profile.identity.p2pPassword))
        try await app.setDoorbellPolicy(.manual)
    }

    func stop() async {
        await app.stop()
        await device.stop()
        for w in watchers { w.cancel() }
    }

    /// (a) Press -> the app's 43; each press is then declined (the only household user: the call ends).
    func presses(_ n: Int, warmup: Int) async throws -> [Double] {
        var samples: [Double] = []
        for i in 0..<(n + warmup) {
            // A press wakes a sleeping device at once; the press is timed either way.
            let t0 = clock.now
            let callId = try await device.pressDoorbell()
            guard let t1 = await stamps.wait("43:\(callId)") else {
                throw ValidationError("press \(i): the app saw no 43 for call \(callId) within 10 s")
            }
            if i >= warmup { samples.append(ms(t1 - t0)) }
            try await endCall(callId, label: "press \(i)", decline: true)
        }
        return samples
    }

    /// (b) The device asleep (DP 149 false, as the app sees it) -> the app's wake -> DP 149 true.
    func wakes(_ n: Int, warmup: Int) async throws -> [Double] {
        var samples: [Double] = []
        for i in 0..<(n + warmup) {
            try await waitAsleep(label: "wake \(i)")
            let woke = try await app.wake(devId: devId, timeout: .milliseconds(Int64(wakeLatencyMs)) + .seconds(10))
            if i >= warmup { samples.append(woke.milliseconds) }
        }
        return samples
    }

    /// (c) Asleep -> wake -> awake -> press -> ring -> accept: timed from the accept to the first
    /// video frame the app decoded on the call's link (`sessionid` = the call id).
    func firstFrames(_ n: Int) async throws -> [Double] {
        var samples: [Double] = []
        for i in 0..<n {
            let label = "first frame \(i)"
            try await waitAsleep(label: label)
            try await app.wake(devId: devId, timeout: .milliseconds(Int64(wakeLatencyMs)) + .seconds(10))
            let callId = try await device.pressDoorbell()
            guard await stamps.wait("ring:\(callId)") != nil else {
                throw ValidationError("\(label): the app did not ring for call \(callId) within 10 s")
            }
            let acceptedAt = Date()
            try await app.acceptDoorbell(callId: callId)
            guard await waitUntil(.seconds(10), { await self.app.answeredDoorbell?.sessionId == callId }) else {
                throw ValidationError("\(label): the device did not send answered for call \(callId) within 10 s")
            }
            let sid = try await app.openDoorbellVideo()
            guard await waitUntil(.seconds(15), { await self.app.videoStats(sessionId: sid)?.firstFrameAt != nil }),
                  let first = await app.videoStats(sessionId: sid)?.firstFrameAt else {
                throw ValidationError("\(label): no video frame decoded within 15 s of the accept")
            }
            samples.append(first.timeIntervalSince(acceptedAt) * 1000)
            try await endCall(callId, label: label, decline: false)
        }
        return samples
    }

    /// Ends doorbell call `callId` from the app (decline, or hang up after an accept) and waits
    /// until both ends have ended it.
    private func endCall(_ callId: String, label: String, decline: Bool) async throws {
        if decline {
            // The decline needs the app's engine to ring first.
            guard await stamps.wait("ring:\(callId)") != nil else {
                throw ValidationError("\(label): the app did not ring for call \(callId) within 10 s")
            }
            try await app.declineDoorbell(callId: callId)
        } else {
            try await app.hangUpDoorbell(callId: callId)
        }
        guard await stamps.wait("ended:\(callId)") != nil else {
            throw ValidationError("\(label): the device did not end call \(callId) within 10 s")
        }
        guard await waitUntil(.seconds(10), { await self.app.doorbellSession == nil }) else {
            throw ValidationError("\(label): the app did not end call \(callId) within 10 s")
        }
    }

    /// Waits for DP 149 false as the app sees it (the device fell asleep after `sleepAfter`).
    private func waitAsleep(label: String) async throws {
        do {
            try await app.waitForDP(devId: devId, DataPointCatalogue.awake, value: .bool(false),
                                    timeout: .milliseconds(Int64(sleepAfter * 1000)) + .seconds(10))
        } catch {
            throw ValidationError("\(label): the device did not report DP 149 false (asleep) in time: \(error)")
        }
    }

    private func waitUntil(_ timeout: Duration, _ condition: @Sendable () async -> Bool) async -> Bool {
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return await condition()
    }

    private func ms(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }
}

/// When events arrived, by key; waits poll (every millisecond) for a key's stamp.
final class EventStamps: Sendable {
    private let stamps = Mutex([String: ContinuousClock.Instant]())

    func mark(_ key: String) {
        let now = ContinuousClock.now
        stamps.withLock { $0[key] = now }
    }

    /// The stamp of `key` once it is there (removed), or nil after `timeout`.
    func wait(_ key: String, timeout: Duration = .seconds(10)) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let t = stamps.withLock({ $0.removeValue(forKey: key) }) { return t }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
