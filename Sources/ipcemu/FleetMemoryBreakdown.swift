import ArgumentParser
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport

/// `ipcemu bench fleet --breakdown`: what one fleet device holds, part by part, measured in this
/// process on N devices of the template against a private mosquitto (docs/fleet.md "Memory per
/// device"). Each step makes N more of one part and reads the process's anonymous memory
/// (`/proc/self/smaps_rollup`, after glibc's `malloc_trim` gave free pages back: the heap that
/// every Swift and libmosquitto allocation lives in) and the RSS; the difference divided by N is
/// that part's cost per device.
struct FleetMemoryBreakdown {
    struct Row {
        var part: String
        var heapBytesPerDevice: Double
        var rssBytesPerDevice: Double
    }

    /// Anonymous resident bytes of this process (`Anonymous:` of smaps_rollup).
    static func anonymousBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Anonymous:") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }

    /// glibc's `malloc_trim` (not in Swift's Glibc module: malloc.h), looked up once.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Anonymous memory and RSS now, after giving freed memory back (so the figures are what is held).
    static func sample() -> (heap: Int, rss: Int) {
        _ = mallocTrim?(0)
        return (anonymousBytes(), ProcessMemory.residentBytes() ?? 0)
    }

    static func run(template: DeviceProfile, count: Int, threads: Int) async throws -> [Row] {
        let broker: MosquittoBroker
        do {
            broker = try MosquittoBroker(MosquittoBroker.Configuration(extraConfiguration: ["max_connections -1"]))
        } catch {
            throw ValidationError("cannot start mosquitto: \(error)")
        }
        defer { broker.stop() }
        var template = template
        template.behaviour.answerPolicy = .answer(afterSeconds: 0)
        let plan = try FleetPlan(groups: [FleetPlan.Group(profile: template, count: count)])
        let loop = try MQTTEventLoop(threads: threads, name: "breakdown")
        defer { loop.shutdown() }
        let timers = TimerScheduler(name: "breakdown-timers")
        defer { timers.shutdown() }
        var rows: [Row] = []
        let n = Double(count)
        func row(_ part: String, _ from: (heap: Int, rss: Int)) -> (heap: Int, rss: Int) {
            let now = sample()
            rows.append(Row(part: part, heapBytesPerDevice: Double(now.heap - from.heap) / n,
                            rssBytesPerDevice: Double(now.rss - from.rss) / n))
            return now
        }
        var mark = sample()

        // 1. The profile copy each device gets (the template's instance for its index).
        var profiles: [DeviceProfile] = []
        profiles.reserveCapacity(count)
        for p in 0..<count { profiles.append(try plan.profile(at: p)) }
        mark = row("profile copy (plan.profile(at:), kept until the Devices are made)", mark)

        // 2. A bare MQTT client per device (libmosquitto handle, our connection state), not connected.
        var clients: [MQTTClient] = []
        clients.reserveCapacity(count)
        for profile in profiles {
            var options = broker.clientOptions(clientID: profile.identity.devId)
            options.keepAlive = 30
            clients.append(try MQTTClient(options: Device.clientOptions(profile: profile, connection: options), eventLoop: loop))
        }
        mark = row("MQTT client, not connected (libmosquitto handle + ClientConnection)", mark)
        // 2b. The same clients connected (no subscription, no publish): socket, libmosquitto's
        //     connected state, the loop's registration.
        for c in clients { c.connect() }
        for c in clients { _ = await c.waitUntilConnected(timeout: .seconds(30)) }
        mark = row("  the same clients connected (bare: no subscription, no publish)", mark)
        // Disconnected but kept until the end: freeing them now would leave holes in the heap
        // that the next step fills, hiding its cost.
        for c in clients { _ = await c.disconnectAndWait(timeout: .seconds(1)) }
        mark = sample()

        // 3. The Device (actor, engine, data points, power machine, sealer/opener, its own client),
        //    made from the profiles above (shared, copy on write), not started.
        //    As in a fleet, the devices share one DeviceTemplate.
        let shared = try DeviceTemplate(template)
        var devices: [Device] = []
        devices.reserveCapacity(count)
        for profile in profiles {
            devices.append(try Device(profile: profile, template: shared,
                                      connection: broker.clientOptions(clientID: profile.identity.devId),
                                      eventLoop: loop, log: EventLog(minimumLevel: .error), timers: timers))
        }
        mark = row("Device made, not started (actor, engines, stores, sealers, its MQTT client)", mark)
        // What the devices did not keep of their profiles (in a fleet the copy lives only while
        // its device is made).
        profiles = []
        mark = row("  the profile copies dropped (a device keeps its devId and the shared template)", mark)

        // 4. Started and online: its inbox (no task while it is empty), socket and packet buffers,
        //    subscriptions, presence and data points published.
        for d in devices { try await d.start() }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for d in devices {
                if running >= 64 { _ = await group.next(); running -= 1 }
                running += 1
                group.addTask { _ = await d.waitUntilConnected(timeout: .seconds(30)) }
            }
        }
        var online = 0
        for d in devices where await d.status.connected { online += 1 }
        guard online == count else { throw ValidationError("only \(online) of \(count) devices came online") }
        try? await Task.sleep(for: .seconds(2))   // the publishes on connect are written and acknowledged
        mark = row("started and online (its inbox, subscriptions, presence and DPs published and acknowledged)", mark)

        for d in devices { await d.stop(timeout: .milliseconds(500)) }
        for c in clients { c.close() }
        // For scale: what one suspended task waiting on an AsyncStream costs (what each device had
        // before its MQTTInbox).
        mark = sample()
        var streams: [AsyncStream<Int>.Continuation] = []
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<count {
            let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingOldest(1024))
            streams.append(continuation)
            tasks.append(Task { for await _ in stream {} })
        }
        try? await Task.sleep(for: .milliseconds(500))
        mark = row("(for scale) an AsyncStream and one task suspended draining it (each device had one before MQTTInbox)", mark)
        for c in streams { c.finish() }
        for t in tasks { await t.value }
        // The sizes of single allocations and of the Device's inline parts (no RSS column).
        if let device = devices.first {
            rows.append(Row(part: "(one Device actor's own allocation, malloc_usable_size)",
                            heapBytesPerDevice: Double(DeviceMemoryLayout.allocationSize(of: device)), rssBytesPerDevice: 0))
        }
        for (part, bytes) in DeviceMemoryLayout.parts() {
            rows.append(Row(part: "(MemoryLayout: \(part))", heapBytesPerDevice: Double(bytes), rssBytesPerDevice: 0))
        }
        return rows
    }
}
