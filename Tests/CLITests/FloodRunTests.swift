import AppSimulator
import CallEngine
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Issue 10 part 4: a flood of refused messages at thousands per second through a real broker
/// against a real `ipcemu run`: memory stays flat, refusals are counted in /metrics, the log holds
/// back, and a genuine call still rings at its usual latency during and after. Issue 23: the
/// replies to the flood are limited (PROTOCOL.md 3.4, 50 a second per device), so an app reading
/// the out topic sees a genuine ring within 200 ms during the flood.
@Suite("Hostile peers: a flood against ipcemu run (issue 10)", .timeLimit(.minutes(8)), .heavy)
struct FloodRunTests {
    static let rate = 2_000          // messages per second
    static let halfSeconds = 2.0     // the flood runs twice this long

    /// The refused kinds, cycling; a fresh sender and session each time (per-sender state must not grow).
    static func payload(_ i: Int, now: Int64) -> [UInt8] {
        let devId = FaultRig.devId
        let envelope = { (data: String) in Array(#"{"protocol":308,"t":\#(now / 1000),"data":{"type":"rtc","data":\#(data)}}"#.utf8) }
        switch i % 20 {
        case 0:   // over 64 KiB
            return envelope(#"{"event":"call","curId":"m-\#(i)","targetId":"\#(devId)","sessionId":"f\#(i)","pad":"\#(String(repeating: "x", count: 66_000))"}"#)
        case 1, 5, 9, 13, 17:
            return Array("not json \(i) {".utf8)
        case 2, 6, 10, 14, 18:   // a call for another device: stop invalid_params
            return envelope(#"{"event":"call","curId":"m-\#(i)","targetId":"another-device","sessionId":"f\#(i)","timeout":\#(now + 30_000),"extra":{"bizType":"screen_ipc","channelType":2}}"#)
        default:  // an event for a session the device does not have: stop undefined_session
            return envelope(#"{"event":"heartbeat","curId":"m-\#(i)","targetId":"\#(devId)","sessionId":"nosuch-\#(i)"}"#)
        }
    }

    /// Sends `count` flood messages at `rate` per second (QoS 0, in 10 ms batches); returns how many went out.
    static func flood(_ client: MQTTClient, from start: Int, count: Int) async -> Int {
        let topic = "smart/device/in/\(FaultRig.devId)"
        let batch = rate / 100
        var sent = 0
        let began = ContinuousClock.now
        while sent < count {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for i in 0..<min(batch, count - sent) {
                if (try? client.publish(topic: topic, payload: payload(start + sent + i, now: now), qos: 0)) != nil {}
            }
            sent += min(batch, count - sent)
            let due = began + .milliseconds(sent * 1000 / rate)
            if ContinuousClock.now < due { try? await Task.sleep(until: due, clock: .continuous) }
        }
        return sent
    }

    /// The device's call -> ring histogram (sum seconds, count) from /metrics.
    static func ringHistogram(_ control: String) async -> (sum: Double, count: Int) {
        let text = (try? await FaultRig.get(control + "/metrics")) ?? ""
        func value(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(#"\#(name){device="\#(FaultRig.devId)"} "#) }
                .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        }
        return (value("ipcemu_call_ring_latency_seconds_sum") ?? 0, Int(value("ipcemu_call_ring_latency_seconds_count") ?? 0))
    }

    /// Calls, waits for the ring, cancels. The device's latency (call received -> ring sent, its
    /// /metrics histogram) and the app's (startCall -> the app reports the ring, taken as the event
    /// arrives; nil if none within 20 s).
    static func ringLatency(_ alice: AppWatch, _ control: String) async throws -> (device: Double, app: Duration?) {
        let mark = alice.count
        let (sum, count) = await ringHistogram(control)
        let events = await alice.app.events()
        let ringSeen = Task { () -> ContinuousClock.Instant? in
            for await e in events { if case .deviceRinging = e { return ContinuousClock.now } }
            return nil
        }
        let start = ContinuousClock.now
        try await alice.app.startCall(devId: FaultRig.devId, timeoutSeconds: 30)
        var device: Double?
        let deadline = ContinuousClock.now + .seconds(20)
        while device == nil, ContinuousClock.now < deadline {
            let now = await ringHistogram(control)
            if now.count > count { device = now.sum - sum }
            try await Task.sleep(for: .milliseconds(50))
        }
        let sid = await alice.first(after: mark, within: .seconds(20)) { e -> String? in
            if case .deviceRinging(let s, _) = e { s } else { nil }
        }
        if sid == nil { ringSeen.cancel() }
        let app = await ringSeen.value.map { $0 - start }
        try await alice.app.cancel()
        _ = await alice.first(after: mark) { e -> Bool? in if case .callEnded = e { true } else { nil } }
        return (device ?? .infinity, app)
    }

    /// The device's `stop`s to the flood's senders (`m-...`) among what the out topic carried.
    static func floodStops(_ messages: [MQTTMessage]) -> Int {
        messages.filter { m in
            guard case .call(let c)? = try? InboundMessage.decode(payload: m.payload).message else { return false }
            return c.event == .stop && c.targetId.hasPrefix("m-")
        }.count
    }

    /// `ipcemu_refusal_replies_dropped_total{device,scope}` (PROTOCOL.md 3.4's reply limits).
    static func repliesDropped(_ metrics: String, scope: String) -> Int {
        FaultRig.sample(metrics, #"ipcemu_refusal_replies_dropped_total{device="\#(FaultRig.devId)",scope="\#(scope)"}"#) ?? 0
    }

    static func refusedTotal(_ metrics: String) -> Int {
        metrics.split(separator: "\n")
            .filter { $0.hasPrefix(#"ipcemu_refused_messages_total{device="\#(FaultRig.devId)""#) }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
    }

    @Test("2,000 refused messages a second: RSS flat, every refusal counted, log rate-limited, calls ring at their usual latency")
    func flood() async throws {
        let rig = try await FaultRig()
        let run = try await rig.device(["--control", "127.0.0.1:0"], answer: "manual", journal: false)
        let control = try #require(await FaultRig.controlURL(run), "\(run.stdout)")
        let pid = run.process.processIdentifier
        let alice = try await rig.app()
        let mallory = try MQTTClient(options: rig.broker.clientOptions(clientID: "mallory"))
        mallory.connect()
        #expect(await mallory.waitUntilConnected(timeout: .seconds(5)))
        // What the out topic carries, which every app of the household reads.
        let outTopic = "smart/device/out/\(FaultRig.devId)"
        let watcher = try await MessageCollector.start(broker: rig.broker, filters: [outTopic], clientID: "out-watcher")

        let before = try await Self.ringLatency(alice, control)
        let perHalf = Int(Double(Self.rate) * Self.halfSeconds)
        // Warm-up (the first refusals allocate what later ones reuse), then the baseline RSS.
        let floodStarted = ContinuousClock.now
        let stopsBefore = Self.floodStops(watcher.messages(on: outTopic))
        _ = await Self.flood(mallory, from: 0, count: Self.rate / 2)
        try await Task.sleep(for: .milliseconds(500))
        let rssStart = try #require(FaultRig.rssKiB(pid))
        let logLinesStart = run.stderr.split(separator: "\n").count
        let flooding = Task { await Self.flood(mallory, from: 1_000_000, count: perHalf) }
        try await Task.sleep(for: .seconds(1))
        let during = try await Self.ringLatency(alice, control)
        let firstHalf = await flooding.value
        let rssHalf = try #require(FaultRig.rssKiB(pid))
        let secondHalf = await Self.flood(mallory, from: 2_000_000, count: perHalf)
        let floodEnded = ContinuousClock.now
        let stopsDuring = Self.floodStops(watcher.messages(on: outTopic)) - stopsBefore
        let sent = Self.rate / 2 + firstHalf + secondHalf

        // Every refusal counted (QoS 0 at this rate: the broker may drop a few).
        var refused = 0
        while ContinuousClock.now < floodEnded + .seconds(10) {
            refused = Self.refusedTotal((try? await FaultRig.get(control + "/metrics")) ?? "")
            if refused >= sent { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let metrics = (try? await FaultRig.get(control + "/metrics")) ?? ""
        let dropped = (sender: Self.repliesDropped(metrics, scope: "sender"), device: Self.repliesDropped(metrics, scope: "device"))
        let callRefusals = FaultRig.sample(metrics, #"ipcemu_refused_messages_total{device="\#(FaultRig.devId)",kind="call"}"#) ?? 0
        let rssEnd = try #require(FaultRig.rssKiB(pid))
        // The app has read the replies to the flood (its event count holds still for half a second).
        var seen = -1
        while alice.count != seen, ContinuousClock.now < floodEnded + .seconds(30) {
            seen = alice.count
            try await Task.sleep(for: .milliseconds(500))
        }
        let after = try await Self.ringLatency(alice, control)
        let logLines = run.stderr.split(separator: "\n").count - logLinesStart
        let floodSeconds = Double((ContinuousClock.now - floodEnded).components.seconds) + 2 * Self.halfSeconds
        let floodSpan = floodEnded - floodStarted
        let spanSeconds = Double(floodSpan.components.seconds) + Double(floodSpan.components.attoseconds) / 1e18
        let stopsTotal = Self.floodStops(watcher.messages(on: outTopic)) - stopsBefore
        print("flood: sent \(sent), refused counted \(refused); RSS \(rssStart) -> \(rssHalf) -> \(rssEnd) KiB; "
              + "ring latency before \(before), during \(during), after \(after); \(logLines) log lines in \(floodSeconds) s; "
              + "stops on the out topic during the flood \(stopsDuring) in \(floodSpan) (\(Int(Double(stopsDuring) / spanSeconds))/s), "
              + "\(stopsTotal) in all for \(callRefusals) call refusals; replies dropped: sender \(dropped.sender), device \(dropped.device)")

        #expect(run.process.isRunning, "\(run.stderr.suffix(1500))")
        // QoS 0 through a broker, into a bounded inbound queue: some are lost before the device
        // reads them (measured 78-94% arrive on a loaded 2-core machine); each one read is counted.
        #expect(refused >= sent * 60 / 100, "refused \(refused) of \(sent)")
        // Bounded memory: the second half of the flood (4,000 messages) grows nothing that stays.
        #expect(rssEnd - rssHalf < 8 * 1024, "RSS \(rssStart) -> \(rssHalf) -> \(rssEnd) KiB")
        // (The first half grows the queues and malloc arenas once: measured +36 MiB, then +3 MiB.)
        #expect(rssEnd - rssStart < 64 * 1024, "RSS \(rssStart) -> \(rssHalf) -> \(rssEnd) KiB")
        // Rate-limited log: at most 20 refusal lines a second, plus the "held back" summaries.
        #expect(Double(logLines) <= 25 * (floodSeconds + 2), "\(logLines) log lines")
        // PROTOCOL.md 3.4 (issue 23): 70% of the flood's messages are refusals the device would
        // answer with a `stop` to their sender (~1,400 a second, all on the out topic every app
        // reads); at most 50 a second go out, whatever the number of senders, the rest are counted.
        // The device sends at most 50 in any second, so the out topic carries at most 50 per
        // started second of the flood.
        #expect(stopsDuring <= 50 * Int(spanSeconds.rounded(.up)), "\(stopsDuring) stops in \(floodSpan)")
        #expect(stopsDuring > 0, "no stop at all: the replies are limited, not gone")
        #expect(dropped.device > 0 && dropped.sender == 0, "dropped \(dropped) (every sender of the flood is new)")
        #expect(stopsTotal + dropped.sender + dropped.device <= callRefusals, "every reply sent or dropped is one refusal's")
        #expect(stopsTotal + dropped.sender + dropped.device >= callRefusals * 95 / 100,
                "\(stopsTotal) stops + \(dropped) dropped for \(callRefusals) call refusals")
        // The device rings at its usual latency (well under a second), during and after; and the
        // app, which reads the device's out topic, sees the ring within 200 ms during the flood too
        // (before the limits, behind ~1,400 other users' stops a second: 1.4-2.0 s under a parallel
        // swift test).
        #expect(during.device < 0.5, "device rang \(during.device) s after the call during the flood (before: \(before.device) s)")
        #expect(after.device < 0.5, "device rang \(after.device) s after the call after the flood (before: \(before.device) s)")
        #expect(during.app.map { $0 < .milliseconds(200) } == true, "app saw the ring during the flood after \(String(describing: during.app))")
        #expect(after.app.map { $0 < .milliseconds(200) } == true, "app saw the ring after the flood after \(String(describing: after.app))")

        _ = await mallory.disconnectAndWait(timeout: .seconds(1))
        mallory.close()
        await watcher.stop()
        await alice.stop()
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(5)) == 0)
    }
}
