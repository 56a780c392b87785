import AppSimulator
import CallEngine
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import IPCWire
import MQTTTransport
import Testing
import TestSupport

/// Every end-to-end suite hangs under this one, so the whole folder runs one test at a time: each
/// test has its own broker, but its timers are short and the machine is shared.
@Suite("End to end over a real mosquitto", .serialized, .heavy)
struct EndToEnd {}

/// How an app user finds the device.
enum AppReach {
    /// `add(address)`: subscribes to this device's out topic.
    case added
    /// `listenToAllDevices`: subscribes to `smart/device/out/+` (the SDK's listen mode).
    case listening
}

/// A real mosquitto, one device from a profile, app users, a wire tap on the device's topics and
/// a raw publisher, all on loopback. Use `withHarness`, which closes everything afterwards.
final class CallHarness: @unchecked Sendable {
    let broker: MosquittoBroker
    let device: Device
    let profile: DeviceProfile
    let deviceEvents: EventRecorder<DeviceEvent>
    /// Sees every message on the device's in and out topics (QoS 1, in order per topic).
    let wire: WireTap
    /// A bare MQTT client for hand-made payloads (a QA harness, an attacker).
    let raw: MQTTClient
    private let rawSealer: Collected<PayloadSealer>
    private let appList = Collected<[AppUser]>([])

    static let quietLog = EventLog(minimumLevel: .error)
    /// What the device and the apps logged at info and above (errors also go to stderr).
    let log: RecordedLog
    /// The raw client's `from` in pv2.x headers (an app value: 2^31 + something).
    static let rawFrom: UInt32 = 0x8000_0000 | 0x00C0_FFEE

    var devId: String { profile.identity.devId }
    var apps: [AppUser] { appList.snapshot }

    /// - Parameters:
    ///   - edit: changes to the shipped doorbell profile (answer policy, timers, security).
    ///   - feeds: where the device's video comes from (a test's own, e.g. behind a fake V4L2 driver).
    init(profile name: String = "doorbell.yaml", edit: (inout DeviceProfile) -> Void = { _ in },
         feeds: VideoFeeds = .shared) async throws {
        log = RecordedLog()
        broker = try await startBroker()
        var p = try DeviceProfile.load(path: Self.repoRoot + "/device-profiles/" + name)
        edit(&p)
        profile = p
        let topics = p.resolvedTopics
        wire = try await WireTap(broker: broker, inTopic: topics.in, outTopic: topics.out,
                                 security: p.security, localKey: p.identity.localKey)
        raw = try MQTTClient(options: broker.clientOptions(clientID: "qa-raw-\(UInt32.random(in: 0...UInt32.max))"))
        raw.connect()
        rawSealer = Collected(try PayloadSealer(mode: p.security, localKey: p.identity.localKey, from: Self.rawFrom))
        device = try Device(profile: p, connection: broker.clientOptions(clientID: p.identity.devId), log: log.eventLog,
                            feeds: feeds)
        deviceEvents = EventRecorder(await device.events())
        try await device.start()
        try #require(await device.waitUntilConnected(timeout: .seconds(5)))
        try #require(await raw.waitUntilConnected(timeout: .seconds(5)))
    }

    var address: DeviceAddress {
        let t = profile.resolvedTopics
        return DeviceAddress(devId: profile.identity.devId, inTopic: t.in, outTopic: t.out, metaTopic: t.meta,
                             security: profile.security, localKey: profile.identity.localKey,
                             p2pPassword: profile.identity.p2pPassword)
    }

    /// A connected app user that can reach the device, with its event recorder.
    func app(_ userId: String, config: AppEngineConfig? = nil, reach: AppReach = .added) async throws
        -> (AppUser, EventRecorder<AppEvent>) {
        let app = try AppUser(userId: userId, connection: broker.clientOptions(clientID: userId), config: config,
                              log: log.eventLog)
        let events = EventRecorder(await app.events())
        try await app.start()
        switch reach {
        case .added:
            try await app.add(address)
        case .listening:
            let address = self.address
            try await app.listenToAllDevices { _ in address }
        }
        appList.withLock { $0.append(app) }
        return (app, events)
    }

    /// What a video test prints when its frames did not come: the app's view of the session's
    /// link (state, timeline, counters, the fmp4Stream handshake) and what the device and the
    /// apps logged.
    func videoDiagnosis(_ app: AppUser, sessionId: String) async -> String {
        let state = await app.videoLinkState(sessionId: sessionId).map { "\($0)" } ?? "no link"
        let timeline = await app.videoLinkTimeline(sessionId: sessionId).map { "\($0)" } ?? "none"
        let stats = await app.videoLinkStatistics(sessionId: sessionId).map { "\($0.stats)" } ?? "none"
        let hevc = await app.hevcReport(sessionId: sessionId)?.summary ?? "none"
        return """
            app link state: \(state)
            timeline: \(timeline)
            link counters: \(stats)
            fmp4Stream: \(hevc)
            log:
            \(log.text)
            """
    }

    /// An app user in listen mode with the given policy for the device's calls.
    func listener(_ userId: String, policy: AnswerPolicy = .manual, reach: AppReach = .listening) async throws
        -> (AppUser, EventRecorder<AppEvent>) {
        try await app(userId, config: AppEngineConfig(userId: userId, incomingPolicy: policy), reach: reach)
    }

    // MARK: Hand-made messages

    /// Publishes `payload` as is on the device's in topic and waits for the broker's PUBACK.
    func sendRaw(_ payload: [UInt8]) async throws {
        try await raw.publishAndWaitForAck(topic: profile.resolvedTopics.in, payload: payload, qos: 1, retain: false,
                                           timeout: .seconds(3))
    }

    /// Seals `json` in the profile's security mode (the raw client's own seq counter).
    func seal(_ json: [UInt8]) throws -> [UInt8] {
        try rawSealer.withLock { (sealer: inout PayloadSealer) -> Result<[UInt8], WireError> in
            do throws(WireError) { return .success(try sealer.seal(json)) } catch { return .failure(error) }
        }.get()
    }

    /// Sends a well-formed 308 message, sealed as the profile says.
    func send(_ message: CallMessage) async throws {
        try await sendRaw(seal(message.envelope(t: WallClock.nowSeconds()).encoded()))
    }

    /// Sends a hand-written JSON body (`{"protocol":..., "data":...}`), sealed as the profile says.
    func sendJSON(_ json: JSONValue) async throws {
        try await sendRaw(seal(json.serialized()))
    }

    /// A valid `call` from `from` to the device, ringing for `seconds`.
    func call(from user: String, session: String, seconds: Double = 10, callType: CallType? = nil,
              extra: CallExtra? = CallExtra()) -> CallMessage {
        CallMessage(event: .call, curId: user, targetId: devId, sessionId: session,
                    timeout: WallClock.nowMs() + Int64(seconds * 1000), callType: callType, extra: extra)
    }

    // MARK: Waiting on the device

    /// Waits until the device's phase is `phase`.
    @discardableResult
    func waitForPhase(_ phase: CallPhase, within timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await device.status.phase == phase { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await device.status.phase == phase
    }

    /// Sends `payload` and waits until the device has logged its refusal and has handled it to the
    /// end (`settle`), and returns the 308 messages the device published meanwhile (there should
    /// be none).
    func repliesToDropped(_ payload: [UInt8]) async throws -> (refused: Bool, replies: [CallMessage]) {
        let mark = await deviceEvents.count
        let outBefore = wire.outCalls().count
        try await sendRaw(payload)
        let refused = await deviceEvents.first(after: mark, within: .seconds(3)) { e -> Bool? in
            if case .refused = e { true } else { nil }
        } ?? false
        try await settle()
        return (refused, Array(wire.outCalls().dropFirst(outBefore)))
    }

    /// Proves that the moment for a reply has passed: a capability probe sent now is handled after
    /// everything sent before it (the device takes its in topic in order), and its answer reaches
    /// the wire tap after whatever the device published for those (one connection, in order). So
    /// once the tap holds the answer, it holds every reply the earlier messages got. (An awake
    /// device only: asleep, probes are dropped.)
    func settle(within timeout: Duration = .seconds(5)) async throws {
        let reqId = "qa-settle-\(UInt64.random(in: 0...UInt64.max))"
        try await sendRaw(seal(AbilityQuery(curId: "qa-settle", reqId: reqId).envelope(t: WallClock.nowSeconds()).encoded()))
        let answered = await eventually(timeout: timeout) { self.wire.answeredProbe(reqId: reqId) }
        try #require(answered, "the device did not answer the settling probe \(reqId) within \(timeout)")
    }

    // MARK: Teardown

    func close() async {
        for app in apps { await app.stop() }
        await device.stop()
        await wire.stop()
        _ = await raw.disconnectAndWait(timeout: .seconds(1))
        raw.close()
        broker.stop()
    }

    static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        return FileManager.default.currentDirectoryPath
    }()
}

/// Runs `body` with a fresh harness and always closes it (also when `body` throws).
func withHarness(profile name: String = "doorbell.yaml", edit: (inout DeviceProfile) -> Void = { _ in },
                 feeds: VideoFeeds = .shared, _ body: (CallHarness) async throws -> Void) async throws {
    let h = try await CallHarness(profile: name, edit: edit, feeds: feeds)
    do {
        try await body(h)
    } catch {
        await h.close()
        throw error
    }
    await h.close()
}

/// A subscriber on the device's in and out topics that decodes what it sees, as a QA tool on the
/// broker would (with the localKey for protected modes).
final class WireTap: Sendable {
    let collector: MessageCollector
    let inTopic: String
    let outTopic: String
    let security: SecurityMode
    let localKey: String

    init(broker: MosquittoBroker, inTopic: String, outTopic: String, security: SecurityMode, localKey: String) async throws {
        self.inTopic = inTopic
        self.outTopic = outTopic
        self.security = security
        self.localKey = localKey
        collector = try await MessageCollector.start(broker: broker, filters: [inTopic, outTopic],
                                                     clientID: "qa-tap-\(UInt32.random(in: 0...UInt32.max))")
    }

    /// Raw payloads on `topic`, in arrival order.
    func payloads(on topic: String) -> [[UInt8]] { collector.messages(on: topic).map(\.payload) }

    /// The 308 events on a topic, opened like a receiver would (a refused payload is skipped, as
    /// the receiver would drop it).
    func calls(on topic: String) -> [CallMessage] {
        guard var opener = try? PayloadOpener(mode: security, localKey: localKey) else { return [] }
        return payloads(on: topic).compactMap { payload in
            guard let opened = try? opener.openMessage(payload), case .call(let m) = opened.message else { return nil }
            return m
        }
    }

    /// As `calls(on:)`, each with the moment this tap received it (about when the device did).
    func timedCalls(on topic: String) -> [(call: CallMessage, at: ContinuousClock.Instant)] {
        guard var opener = try? PayloadOpener(mode: security, localKey: localKey) else { return [] }
        return collector.timedMessages(on: topic).compactMap { arrival in
            guard let opened = try? opener.openMessage(arrival.message.payload), case .call(let m) = opened.message else { return nil }
            return (m, arrival.at)
        }
    }

    /// Whether the device's answer to the probe `reqId` has reached the tap.
    func answeredProbe(reqId: String) -> Bool {
        guard var opener = try? PayloadOpener(mode: security, localKey: localKey) else { return false }
        return payloads(on: outTopic).contains { payload in
            guard let opened = try? opener.openMessage(payload), case .abilityAnswer(let answer) = opened.message,
                case .answer(_, let answered) = answer.kind else { return false }
            return answered == reqId
        }
    }

    /// Every 308 event the device published.
    func outCalls() -> [CallMessage] { calls(on: outTopic) }
    /// Every 308 event sent to the device (that a receiver would accept).
    func inCalls() -> [CallMessage] { calls(on: inTopic) }

    /// The device's messages of `event` (to `target`, if given).
    func sent(_ event: CallEvent, to target: String? = nil) -> [CallMessage] {
        outCalls().filter { $0.event == event && (target == nil || $0.targetId == target) }
    }

    /// Waits until the device has published `count` messages of `event` (to `target`).
    @discardableResult
    func waitForSent(_ event: CallEvent, to target: String? = nil, count: Int = 1,
                     within timeout: Duration = .seconds(5)) async -> [CallMessage] {
        _ = await eventually(timeout: timeout) { self.sent(event, to: target).count >= count }
        return sent(event, to: target)
    }

    func stop() async { await collector.stop() }
}

/// Collects an actor's events so a test can wait for one.
actor EventRecorder<Event: Sendable> {
    private(set) var events: [Event] = []

    init(_ stream: AsyncStream<Event>) {
        Task { await self.consume(stream) }
    }

    private func consume(_ stream: AsyncStream<Event>) async {
        for await e in stream { events.append(e) }
    }

    var count: Int { events.count }

    /// Every event so far that matches.
    func all<T>(_ match: (Event) -> T?) -> [T] { events.compactMap(match) }

    /// Waits until an event matches, returning it, or nil after `timeout`.
    func first<T>(within timeout: Duration = .seconds(5), _ match: (Event) -> T?) async -> T? {
        await first(after: 0, within: timeout, match)
    }

    /// As `first`, looking only at events from index `mark` on (see `count`).
    func first<T>(after mark: Int, within timeout: Duration = .seconds(5), _ match: (Event) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            for e in events.dropFirst(mark) { if let m = match(e) { return m } }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until `count` events match; returns the matches either way.
    func wait<T>(for count: Int, within timeout: Duration = .seconds(5), _ match: (Event) -> T?) async -> [T] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = events.compactMap(match)
            if found.count >= count || ContinuousClock.now >= deadline { return found }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension AppEvent {
    var endedRecord: CallRecord? { if case .callEnded(let r) = self { r } else { nil } }
    var incomingSession: String? { if case .incomingCall(let s, _) = self { s } else { nil } }
    func receivedEvent(_ event: CallEvent) -> CallMessage? {
        if case .received(let m, _) = self, m.event == event { m } else { nil }
    }
    func sentEvent(_ event: CallEvent) -> CallMessage? {
        if case .sent(let m, _) = self, m.event == event { m } else { nil }
    }
}

extension DeviceEvent {
    var endedRecord: CallRecord? { if case .callEnded(let r) = self { r } else { nil } }
    var isRefusal: Bool { if case .refused = self { true } else { false } }
    var isConnected: Bool? { if case .connection(let up, _) = self { up } else { nil } }
    func sentEvent(_ event: CallEvent) -> CallMessage? {
        if case .sent(let m) = self, m.event == event { m } else { nil }
    }
    func receivedEvent(_ event: CallEvent) -> CallMessage? {
        if case .received(let m) = self, m.event == event { m } else { nil }
    }
}
