import ArgumentParser
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Synchronization

/// `ipcemu bench fleet`: an `ipcemu fleet` in its own process(es) against a private mosquitto,
/// measured from outside as an app would see it (DESIGN.md "Scale"; docs/fleet.md).
extension BenchCommand {
    struct FleetBench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fleet",
            abstract: "Start a fleet, load it with calls, stop it; print time to online, memory, latency, shutdown.",
            discussion: """
                Idle phase: starts `ipcemu fleet --count N` (answer policy: answer at once) on --brokers \
                private mosquittos (its --broker list) and waits until every device is online (time, RSS per device summed over every \
                fleet process). Load phase: for --seconds, --calls-per-second calls to random idle devices; \
                each call waits for ring and answer, then hangs up (call -> ring, call -> answer, errors, \
                lost calls). With --reconnect-storm, a storm phase: SIGUSR1 (every device's connection dropped \
                at once, brought back paced per broker with jittered back-off), then the time until every \
                device's will (offline) and its online status again have been seen. Shutdown phase: SIGTERM, then the time until every device's retained status \
                is offline and the fleet has exited. Use a release build.
                """
        )

        @Option(help: "Devices.") var count: Int = 1000
        @Option(help: "Calls per second in the load phase (0: no load phase).") var callsPerSecond: Double = 200
        @Option(help: "Seconds of load.") var seconds: Double = 10
        @Option(help: "Template profile of the devices.") var profile: String = "device-profiles/doorbell.yaml"
        @Option(help: "MQTT event-loop threads of each fleet process.") var threads: Int = 2
        @Option(help: "Passed to ipcemu fleet (forces workers for a test).") var maxDevicesPerProcess: Int?
        @Option(help: ArgumentHelp(
            "Private mosquitto processes the bench starts and gives the fleet as its --broker list (each device on the one its devId hashes to); the calls of each broker's devices go through that broker.",
            valueName: "K"))
        var brokers: Int = 1
        @Option(help: ArgumentHelp(
            "How the fleet's devices reach the private brokers: unix (Unix domain sockets, the default) or tcp (loopback ports); the bench's own clients use TCP either way.",
            valueName: "tcp|unix"))
        var privateBrokerTransport: PrivateBrokerTransport = .unix
        @Flag(help: "After the load phase, a reconnect storm (SIGUSR1 to the fleet) timed until every device is back online.")
        var reconnectStorm = false
        @Flag(help: "Instead of a fleet process: what one device holds, part by part, measured in this process on --count devices.")
        var breakdown = false
        @Flag(help: "Print the results as one JSON object.") var json = false

        func validate() throws {
            guard (1...1_000_000).contains(count) else { throw ValidationError("--count must be 1 to 1000000") }
            guard callsPerSecond >= 0, callsPerSecond <= 100_000 else { throw ValidationError("--calls-per-second must be 0 to 100000") }
            guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be more than 0, at most 3600") }
            guard (1...64).contains(brokers) else { throw ValidationError("--brokers must be 1 to 64, got \(brokers)") }
            guard callsPerSecond * seconds <= 200_000 else {
                throw ValidationError("at most 200000 calls per run (--calls-per-second x --seconds): every call is encoded before the load starts")
            }
        }

        func run() async throws {
            DescriptorBudget.raiseToHardLimit()
            if breakdown {
                let rows = try await FleetMemoryBreakdown.run(template: try loadProfile(profile), count: count, threads: threads)
                say("bench fleet --breakdown: \(count) devices of \(profile), bytes per device (anonymous memory after malloc_trim; RSS)")
                for r in rows {
                    say(String(format: "  %8.0f anon %8.0f RSS  %@", r.heapBytesPerDevice, r.rssBytesPerDevice, r.part))
                }
                return
            }
            var privates: [PrivateBroker] = []
            defer { for b in privates { b.broker.stop() } }
            // As `ipcemu fleet`'s private brokers: several listener ports per broker for big fleets.
            let listeners = FleetCommand.listenersNeeded(devicesPerBroker: (count + brokers - 1) / brokers)
            for _ in 0..<brokers {
                do {
                    // The bench's own watchers take 10,000s of retained and live messages in bursts:
                    // unbounded queues, so the broker never drops what the bench must see.
                    privates.append(try PrivateBroker(listeners: listeners, transport: privateBrokerTransport,
                                                      maxInflightMessages: 1000, maxQueuedMessages: 0))
                } catch {
                    throw ValidationError("cannot start mosquitto: \(error)")
                }
            }
            let started = privates.map(\.broker)
            let list: FleetBrokerList
            do { list = try FleetBrokerList(urls: privates.flatMap { $0.deviceURLs() }) } catch { throw ValidationError(error.description) }
            let brokerURLs = list.urls.joined(separator: ",")
            let template = try loadProfile(profile)
            let ids = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: count)]).devIds(0..<count)
            let topics = ids.map { template.topics(for: $0) }

            // Presence watchers (one per broker): every device's retained online status.
            let loop = try MQTTEventLoop(threads: 2, name: "bench")
            let presence = PresenceWatch(devIds: ids)
            var watchers: [MQTTClient] = []
            for broker in started {
                let watcher = try MQTTClient(options: broker.clientOptions(clientID: "bench-presence"), eventLoop: loop)
                watcher.setMessageHandler { presence.received($0) }
                try watcher.subscribe("smart/device/meta/+/online", qos: 1)
                watcher.connect()
                guard await watcher.waitUntilConnected() else { throw ValidationError("bench client could not connect to \(broker.url)") }
                watchers.append(watcher)
            }

            // Idle phase.
            var args = ["fleet", "--profile", "\(profile):\(count)", "--broker", brokerURLs, "--answer", "answer",
                        "--threads", String(threads), "--json"]
            if let maxDevicesPerProcess { args += ["--max-devices-per-process", String(maxDevicesPerProcess)] }
            let fleet = FleetProcess(arguments: args)
            let clock = ContinuousClock()
            let spawned = clock.now
            try fleet.start()
            guard let online = await fleet.waitForOnline(timeout: .seconds(120)) else {
                fleet.kill()
                throw ValidationError("the fleet did not report online within 120 s; its output:\n\(fleet.failureReport)")
            }
            let timeToOnline = Self.seconds(clock.now - spawned)
            let allSeen = await presence.waitUntil(online: count, timeout: .seconds(30))
            let rss = online.rssBytes
            let processes = online.processes
            let onlineCount = online.online
            let fleetSeconds = online.seconds

            // Load phase.
            var load: LoadResult?
            if callsPerSecond > 0 {
                load = try await Self.load(brokers: started, listeners: listeners, list: list, loop: loop, ids: ids, topics: topics,
                                           rate: callsPerSecond, seconds: seconds)
            }

            // Storm phase.
            var storm: StormResult?
            if reconnectStorm {
                presence.markStorm()
                let sent = clock.now
                fleet.signal(SIGUSR1)
                let dropped = await presence.waitUntilStorm(offline: count, timeout: .seconds(120))
                let droppedAfter = Self.seconds(clock.now - sent)
                let back = await presence.waitUntilStorm(backOnline: count, timeout: .seconds(300))
                let backAfter = Self.seconds(clock.now - sent)
                let notes = await fleet.waitForNotes(prefix: "reconnect storm: ", containing: "back online", count: processes,
                                                     timeout: .seconds(30))
                storm = StormResult(allWillsSeconds: dropped ? droppedAfter : -1, allBackOnlineSeconds: back ? backAfter : -1,
                                    backOnline: presence.stormBackOnline, fleetNotes: notes)
            }

            // Shutdown phase.
            let stopSent = clock.now
            fleet.signal(SIGTERM)
            let offline = await presence.waitUntil(offline: count, timeout: .seconds(30))
            let allOffline = Self.seconds(clock.now - stopSent)
            let exited = await fleet.waitForExit(timeout: .seconds(30))
            let exitedAfter = Self.seconds(clock.now - stopSent)
            for watcher in watchers { watcher.close() }
            loop.shutdown()

            var result: [String: Any] = [
                "devices": count, "brokers": brokers, "online": onlineCount, "processes": processes,
                "timeToOnlineSeconds": timeToOnline, "fleetReportedSeconds": fleetSeconds,
                "allRetainedOnlineSeen": allSeen,
                "rssBytes": rss, "rssBytesPerDevice": count > 0 ? rss / count : 0,
                "shutdownAllOfflineSeconds": offline ? allOffline : -1, "shutdownExitSeconds": exited != nil ? exitedAfter : -1,
                "exitStatus": exited.map { Int($0) } ?? -1,
            ]
            if let load { result["load"] = load.json }
            if let storm {
                result["reconnectStorm"] = ["allWillsSeenSeconds": storm.allWillsSeconds, "allBackOnlineSeconds": storm.allBackOnlineSeconds,
                                            "backOnline": storm.backOnline, "fleetNotes": storm.fleetNotes] as [String: Any]
            }
            if json {
                let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
                say(String(decoding: data, as: UTF8.self))
            } else {
                say("bench fleet: \(count) devices in \(processes) process\(processes == 1 ? "" : "es") on \(brokerURLs)")
                say(String(format: "  idle:     %d online in %.2f s from spawn (fleet says %.2f s); %.1f KB RSS per device (%.1f MB)",
                           onlineCount, timeToOnline, fleetSeconds, Double(rss) / Double(max(1, count)) / 1024, Double(rss) / 1_048_576))
                if let load {
                    say(String(format: "  load:     %d calls at %.0f/s for %.0f s: %d rang, %d answered, %d errors, %d lost",
                               load.sent, callsPerSecond, seconds, load.rang, load.answered, load.errors, load.lost))
                    say("  call -> ring:   \(Percentiles(load.callToRing).summary)")
                    say("  call -> answer: \(Percentiles(load.callToAnswer).summary)")
                    for e in load.errorSamples.prefix(5) { say("    error: \(e)") }
                }
                if let storm {
                    say(String(format: "  storm:    SIGUSR1 -> every will seen in %@, all %d back online (online status seen again) in %@",
                               storm.allWillsSeconds >= 0 ? String(format: "%.2f s", storm.allWillsSeconds) : "NOT within 120 s",
                               storm.backOnline,
                               storm.allBackOnlineSeconds >= 0 ? String(format: "%.2f s", storm.allBackOnlineSeconds) : "NOT within 300 s"))
                    for note in storm.fleetNotes { say("    fleet: \(note)") }
                }
                say(String(format: "  shutdown: SIGTERM -> all %d offline in %@, fleet exited in %@ (status %@)",
                           count, offline ? String(format: "%.2f s", allOffline) : "NOT within 30 s",
                           exited != nil ? String(format: "%.2f s", exitedAfter) : "NOT within 30 s",
                           exited.map { String($0) } ?? "-"))
            }
        }

        /// The load phase: each broker's devices called through that broker, the rate shared in
        /// proportion to their number, all brokers at once; one result.
        static func load(brokers: [MosquittoBroker], listeners: Int, list: FleetBrokerList, loop: MQTTEventLoop, ids: [String],
                         topics: [ResolvedTopics], rate: Double, seconds: Double) async throws -> LoadResult {
            var loads: [(CallLoad, Double)] = []
            for (b, broker) in brokers.enumerated() {
                // The list holds each broker's listeners in turn: listener u is broker u / listeners.
                let mine = ids.indices.filter { list.index(of: ids[$0]) / max(1, listeners) == b }
                guard !mine.isEmpty else { continue }
                let share = rate * Double(mine.count) / Double(max(1, ids.count))
                loads.append((try await CallLoad(broker: broker, loop: loop, devIds: mine.map { ids[$0] }, topics: mine.map { topics[$0] }), share))
            }
            return try await withThrowingTaskGroup(of: LoadResult.self) { group in
                for (load, share) in loads { group.addTask { try await load.run(rate: share, seconds: seconds) } }
                var sum = LoadResult()
                for try await r in group {
                    sum.sent += r.sent
                    sum.rang += r.rang
                    sum.answered += r.answered
                    sum.errors += r.errors
                    sum.lost += r.lost
                    sum.callToRing += r.callToRing
                    sum.callToAnswer += r.callToAnswer
                    sum.errorSamples += r.errorSamples
                }
                return sum
            }
        }

        struct StormResult {
            var allWillsSeconds: Double
            var allBackOnlineSeconds: Double
            var backOnline: Int
            var fleetNotes: [String]
        }

        static func seconds(_ d: Duration) -> Double {
            Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
    }
}

/// Every device's retained online status, as the bench sees it.
final class PresenceWatch: Sendable {
    private let online = Mutex<[String: Bool]>([:])
    private let known: Set<String>
    /// Since `markStorm`: devices whose will (offline) came, and of those the ones online again.
    private let storm = Mutex<(marked: Bool, offline: Set<String>, back: Set<String>)>((false, [], []))

    init(devIds: [String]) { known = Set(devIds) }

    func received(_ message: MQTTMessage) {
        let parts = message.topic.split(separator: "/")
        guard parts.count >= 2 else { return }
        let devId = String(parts[parts.count - 2])
        guard known.contains(devId) else { return }
        let isOnline = message.payloadText.contains(#""online":true"#)
        online.withLock { $0[devId] = isOnline }
        storm.withLock { s in
            guard s.marked else { return }
            if !isOnline { s.offline.insert(devId) } else if s.offline.contains(devId) { s.back.insert(devId) }
        }
    }

    func markStorm() { storm.withLock { $0 = (true, [], []) } }

    var stormBackOnline: Int { storm.withLock { $0.back.count } }

    func waitUntilStorm(offline n: Int, timeout: Duration) async -> Bool {
        await poll(timeout) { self.storm.withLock { $0.offline.count } >= n }
    }

    func waitUntilStorm(backOnline n: Int, timeout: Duration) async -> Bool {
        await poll(timeout) { self.storm.withLock { $0.back.count } >= n }
    }

    private func poll(_ timeout: Duration, _ done: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if done() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return done()
    }

    func count(online wanted: Bool) -> Int { online.withLock { $0.values.filter { $0 == wanted }.count } }

    func waitUntil(online n: Int, timeout: Duration) async -> Bool { await wait(true, n, timeout) }
    func waitUntil(offline n: Int, timeout: Duration) async -> Bool { await wait(false, n, timeout) }

    private func wait(_ state: Bool, _ n: Int, _ timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if count(online: state) >= n { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return count(online: state) >= n
    }
}

/// The fleet under test: a child `ipcemu fleet --json` whose output lines are watched.
final class FleetProcess: Sendable {
    let process = Process()
    private let heard = Mutex(Heard())

    /// What the fleet printed so far.
    private struct Heard {
        var lines: [FleetLine] = []
        /// Output lines that were not fleet lines, with what was wrong (shown when it fails).
        var unreadable: [String] = []
        var text = ""
        /// A line not finished yet.
        var buffer = Data()
    }

    init(arguments: [String]) {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = arguments
    }

    func start() throws {
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.standardError
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard !data.isEmpty else { handle.readabilityHandler = nil; return }
            self?.received(data)
        }
        try process.run()
    }

    private func received(_ data: Data) {
        heard.withLock { heard in
            heard.buffer.append(data)
            while let nl = heard.buffer.firstIndex(of: 0x0A) {
                let line = Data(heard.buffer[heard.buffer.startIndex..<nl])
                heard.buffer.removeSubrange(heard.buffer.startIndex...nl)
                heard.text += String(decoding: line, as: UTF8.self) + "\n"
                do {
                    heard.lines.append(try FleetLine(jsonLine: line))
                } catch {
                    heard.unreadable.append("\(error): \(String(decoding: line.prefix(200), as: UTF8.self))")
                }
            }
        }
    }

    /// The fleet's `online` line, once it printed it.
    func waitForOnline(timeout: Duration) async -> FleetOnlineLine? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = online { return line }
            if !process.isRunning { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return online
    }

    /// The fleet's notes (`note` lines, a supervisor relaying its workers') starting with `prefix`
    /// and holding `containing`, once `count` of them came (or at the timeout).
    func waitForNotes(prefix: String, containing: String, count: Int, timeout: Duration) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let notes = heard.withLock {
                $0.lines.compactMap { line -> String? in
                    guard case .note(let n) = line else { return nil }
                    // A supervisor relays a worker's note as "worker LO..<HI: <note>".
                    let text = n.message.range(of: prefix).map { String(n.message[$0.lowerBound...]) }
                    return text.flatMap { $0.contains(containing) ? n.message : nil }
                }
            }
            if notes.count >= count || ContinuousClock.now >= deadline || !process.isRunning { return notes }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private var online: FleetOnlineLine? {
        heard.withLock {
            $0.lines.lazy.compactMap { if case .online(let o) = $0 { o } else { nil } }.first
        }
    }

    /// The last of the output, and every line that was not a fleet line with what was wrong.
    var failureReport: String {
        heard.withLock {
            String($0.text.suffix(2000))
                + ($0.unreadable.isEmpty ? "" : "\nlines that were not fleet lines:\n" + $0.unreadable.suffix(10).joined(separator: "\n"))
        }
    }

    func signal(_ sig: Int32) { if process.isRunning { Glibc.kill(process.processIdentifier, sig) } }
    func kill() { signal(SIGKILL) }

    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}
