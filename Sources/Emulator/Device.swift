import CallEngine
import CallRuntime
import Camera
import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport
import Synchronization
import WebRTCLink

/// One emulated device: one MQTT connection, one call engine, one actor (DESIGN.md "Device /
/// Fleet"). It carries out what the engine decides: publishes messages (sealed per the profile's
/// security mode), runs the timers, answers capability probes, and guards the P2P link.
public actor Device {
    /// What the devices of its template share (one reference per template; DeviceTemplate.swift).
    public nonisolated let template: DeviceTemplate
    public nonisolated let devId: String
    /// Its identity and broker when they are more than its devId in the template (else nil).
    nonisolated let own: DeviceOwnProfile?
    nonisolated let client: any MessageTransport
    /// Its clock, timers, video feeds, link factory and log: one object a fleet's devices share.
    nonisolated let runtime: DeviceRuntime
    nonisolated var log: EventLog { runtime.log }
    /// The clock the engine is fed from (injected; `SystemClock` unless a test gives another).
    public nonisolated var clock: any EngineClock { runtime.context.clock }
    /// Where its timers run (injected; `TimerScheduler.shared` unless a fleet shares its own, or a
    /// test or the simulator gives a `SimulatedClock`).
    public nonisolated var scheduler: any TimerScheduling { runtime.context.scheduler }

    /// The engine, its clock and its timers (CallRuntime's one engine host): the §3 engine for
    /// `screen_ipc`, the doorbell machine of PROTOCOL.md 8 for `ac_doorbell` and `doorbell`.
    var host: EngineHost<DeviceSideEngine>
    var engine: DeviceSideEngine { host.engine }
    /// PROTOCOL.md 8.3: the device's data points (none for a `screen_ipc` profile without `dps`).
    var dataPoints: DataPointStore
    /// PROTOCOL.md 8.4: sleep, wake and battery, with its timers on the same scheduler.
    var power: PowerMachine
    var powerTimers: ScheduledTimers
    /// PROTOCOL.md 8.5: press snapshots, motion snapshots and left messages, served by the control
    /// API. Made (with its folder) on first use: an idle fleet device has none.
    public nonisolated var mediaStore: DeviceMediaStore {
        madeMediaStore.withLock { made in
            if let made { return made }
            let store = DeviceMediaStore(devId: devId, root: runtime.mediaRoot ?? DeviceMediaStore.defaultRoot, clock: clock)
            made = store
            return store
        }
    }
    private nonisolated let madeMediaStore = Mutex<DeviceMediaStore?>(nil)
    /// PROTOCOL.md 8.8: the pushes of each press (nil without `push.url` or `push.apnsDir`).
    nonisolated let pushes: PushSender?
    /// PROTOCOL.md 9.4: on Tuya's cloud, the wire as the SDK writes it and the product's schema.
    public nonisolated let cloud: DeviceCloudOptions?
    private var opener: PayloadOpener
    var sealer: PayloadSealer
    private(set) var connected = false
    /// Connected, subscribed, and presence published.
    private var ready = false
    /// The transport publishes the presence at each connection's SUBACK (`MQTTPresence`), and
    /// says `.connected` only after it; else the device publishes it once subscribed.
    private var presenceByTransport = false
    /// Calls, links, counters: made on first use (DeviceActivity.swift).
    var activity: DeviceActivity?
    /// What the doorbell parts of PROTOCOL.md 8 counted (presses, wakes, drops while asleep, DP
    /// reports ...; inline: a device with DPs counts its first report on connect).
    public internal(set) var doorbellCounters = DoorbellCounters()
    private var observers = EventObservers<DeviceEvent>()
    /// Messages and connection states waiting for the device, in order (made by `start`).
    private var inbox: MQTTInbox?
    private var readyWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    private var nextWaiterToken: UInt64 = 0
    var random = SystemRandomNumberGenerator()
    private var stopped = false
    /// `stop` is done: the connection closed, the streams ended.
    private var stopFinished = false
    /// Where the links' video comes from (the real link factory's feeds).
    public nonisolated var feeds: VideoFeeds { runtime.feeds }
    /// What builds the P2P links (injected; the real GStreamer links unless a test or the
    /// simulator gives `SimulatedDeviceLinks`).
    public nonisolated var linkFactory: any DeviceLinkFactory { runtime.linkFactory }
    /// What the camera of the links last reported (nil until a link streamed it).
    public var cameraStatus: FrameSourceStatus? { camera.status }
    /// Refusals counted by kind, their log lines rate-limited (issue 10, hostile peers).
    /// Made on the first refusal (or the first read): an idle fleet device has none.
    public nonisolated var refusals: RefusalLog {
        madeRefusals.withLock { made in
            if let made { return made }
            let log = RefusalLog()
            made = log
            return log
        }
    }
    private nonisolated let madeRefusals = Mutex<RefusalLog?>(nil)
    /// The fewest P2P links a device keeps at once, whatever its live-view limit **[ours]**.
    public static let maxLinks = 8

    /// The most P2P links a device keeps at once **[ours]**: its live-view watchers plus the
    /// answered call's link (`liveViewLimit` + 1, issue 11: 50 watchers of one device), at least
    /// `maxLinks`. A cap against offers that pile up links (issue 10); the live-view limit itself
    /// refuses the next watcher first, with `close_reason` 2.
    public static func linkCap(liveViewLimit: Int) -> Int {
        max(maxLinks, min(max(0, liveViewLimit), 1_000_000) + 1)
    }

    /// Creates the device on a new MQTT client; `start()` connects it.
    /// - Parameters:
    ///   - connection: where the broker is (host, port, TLS); the client id, credentials and last
    ///     will come from the profile.
    ///   - eventLoop: the MQTT loop to share (a fleet shares one; nil: the process-wide one).
    ///   - timers: the timer structure to share (a fleet shares one heap; nil: the process-wide one;
    ///     a `SimulatedClock`, also given as `clock`, for simulated time).
    ///   - links: what builds the P2P links (nil: the real ones on `feeds`; `SimulatedDeviceLinks`).
    ///   - template: what the devices of its template share (a fleet gives one per group); used
    ///     when `profile` is that template but for its identity and broker, else the device makes
    ///     its own.
    public init(profile: DeviceProfile, template: DeviceTemplate? = nil, connection: MQTTClientOptions,
                eventLoop: MQTTEventLoop? = nil, log: EventLog = EventLog(), timers: (any TimerScheduling)? = nil,
                clock: any EngineClock = SystemClock(), feeds: VideoFeeds = .shared, links: (any DeviceLinkFactory)? = nil,
                mediaRoot: String? = nil) throws {
        try self.init(profile: profile, template: template, connection: connection, eventLoop: eventLoop,
                      runtime: DeviceRuntime(log: log, clock: clock, timers: timers, feeds: feeds, links: links,
                                             mediaRoot: mediaRoot))
    }

    /// A device on a runtime it shares with others (a fleet's devices share one).
    init(profile: DeviceProfile, template: DeviceTemplate?, connection: MQTTClientOptions, eventLoop: MQTTEventLoop?,
         runtime: DeviceRuntime) throws {
        let client = try MQTTClient(options: Self.clientOptions(profile: profile, connection: connection), eventLoop: eventLoop)
        try self.init(profile: profile, template: template, transport: client, runtime: runtime)
    }

    /// Creates the device on a transport of the caller's (issue 9: a unit test drives a device
    /// without a broker; give it options made by `clientOptions`). Its P2P links take their video
    /// from `feeds` (one capture and encoder per camera and stream size, shared; issue 11) unless
    /// `links` builds them.
    public init(profile: DeviceProfile, template: DeviceTemplate? = nil, transport: any MessageTransport,
                log: EventLog = EventLog(), timers: (any TimerScheduling)? = nil, clock: any EngineClock = SystemClock(),
                feeds: VideoFeeds = .shared, links: (any DeviceLinkFactory)? = nil, mediaRoot: String? = nil,
                cloud: DeviceCloudOptions? = nil) throws {
        try self.init(profile: profile, template: template, transport: transport,
                      runtime: DeviceRuntime(log: log, clock: clock, timers: timers, feeds: feeds, links: links,
                                             mediaRoot: mediaRoot),
                      cloud: cloud)
    }

    init(profile: DeviceProfile, template: DeviceTemplate?, transport: any MessageTransport, runtime: DeviceRuntime,
         cloud: DeviceCloudOptions? = nil) throws {
        self.runtime = runtime
        self.cloud = cloud
        let shared = try template.flatMap { $0.isTemplate(of: profile) ? $0 : nil } ?? DeviceTemplate(profile)
        let devId = profile.identity.devId
        self.template = shared
        self.devId = devId
        self.own = shared.identity(devId: devId) == profile.identity && shared.profile.broker == profile.broker
            ? nil : DeviceOwnProfile(identity: profile.identity, broker: profile.broker)
        self.host = EngineHost(engine: shared.engine.engine(devId: devId), context: runtime.context)
        self.dataPoints = shared.dataPoints
        var powerConfig = shared.power
        powerConfig.devId = devId
        self.power = PowerMachine(config: powerConfig)
        self.powerTimers = ScheduledTimers(context: runtime.context)
        self.pushes = profile.push.isEnabled
            ? PushSender(configuration: PushConfiguration(url: profile.push.url, apnsDir: profile.push.apnsDir),
                         log: runtime.log, clock: runtime.context.clock, scheduler: runtime.context.scheduler) : nil
        let key = profile.identity.localKey
        self.opener = try PayloadOpener(mode: profile.security, localKey: key)
        self.sealer = try PayloadSealer(mode: profile.security, localKey: key, from: SealHeader.deviceFrom)
        if cloud != nil {
            // PROTOCOL.md 9.4: the SDK writes pv2.2 `from` = 1 in host byte order (01 00 00 00), and
            // every receiver accepts both orders.
            sealer.pv22FromByteOrder = .littleEndian
            opener.pv22FromAcceptance = .eitherOrder
        }
        self.client = transport
    }

    /// Its profile: the template's, with its own identity and broker (built on each read).
    public nonisolated var profile: DeviceProfile {
        var profile = template.profile
        if let own {
            profile.identity = own.identity
            profile.broker = own.broker
        } else {
            profile.identity = template.identity(devId: devId)
        }
        return profile
    }

    /// Its 309 answer and meta (PROTOCOL.md 5, 8.4): the template's with its devId, and `awake`
    /// for a low-power device (`DeviceProfile.meta(awake:)` without building the whole profile;
    /// the category, the one identity field the meta carries besides the devId, is the template's).
    nonisolated func meta(awake: Bool) -> AbilityAnswer { Self.meta(template: template, devId: devId, awake: awake) }

    nonisolated static func meta(template: DeviceTemplate, devId: String, awake: Bool) -> AbilityAnswer {
        var meta = template.meta
        meta.devId = devId
        if meta.awake != nil { meta.awake = awake }
        return meta
    }

    /// Its topics (PROTOCOL.md 1), made from the template's on each read (`outTopic`, `inTopic`
    /// ... make only the one asked).
    public nonisolated var topics: ResolvedTopics { template.profile.topics.resolved(devId: devId) }
    nonisolated var inTopic: String { Self.fill(template.profile.topics.in, devId) }
    nonisolated var outTopic: String { Self.fill(template.profile.topics.out, devId) }
    nonisolated var metaTopic: String { Self.fill(template.profile.topics.meta, devId) }
    nonisolated var onlineTopic: String { Self.fill(template.profile.topics.meta, devId, suffix: "/online") }
    nonisolated var wakeTopic: String { TopicTemplates.wakePrefix + devId }

    /// `template` with every `{devId}` replaced, then `suffix`, in a string of exactly that size
    /// (pure Swift over UTF-8 bytes: no NSString bridge, no grapheme walk; the in topic and the
    /// will topic are kept per device, the meta and online topics are made at each connect).
    static func fill(_ template: String, _ devId: String, suffix: String = "") -> String {
        let placeholder = TopicTemplates.placeholder.utf8
        let source = template.utf8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(source.count + devId.utf8.count + suffix.utf8.count)
        var index = source.startIndex
        while index < source.endIndex {
            if source[index] == placeholder.first, source[index...].starts(with: placeholder) {
                bytes.append(contentsOf: devId.utf8)
                index = source.index(index, offsetBy: placeholder.count)
            } else {
                bytes.append(source[index])
                index = source.index(after: index)
            }
        }
        bytes.append(contentsOf: suffix.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The MQTT options of the profile's device on `connection`: client id, credentials, keep
    /// alive and the retained offline last will (PROTOCOL.md 1).
    public static func clientOptions(profile: DeviceProfile, connection: MQTTClientOptions) -> MQTTClientOptions {
        var options = connection
        options.clientID = profile.identity.devId
        options.username = options.username ?? profile.brokerUsername
        options.password = options.password ?? profile.broker.password
        options.keepAlive = profile.broker.keepAlive
        options.will = MQTTWill(topic: fill(profile.topics.meta, profile.identity.devId, suffix: "/online"),
                                payload: offlineWill, qos: 1, retain: true)
        // Oversized payloads reach the wire decoder, which refuses them unread with a log line
        // (PROTOCOL.md 1); the transport's own limit only guards memory.
        options.maxInboundPayloadBytes = 1 << 20
        return options
    }

    /// The last will's payload, one array shared by every device (copy on write).
    private static let offlineWill = Array(#"{"online":false}"#.utf8)

    // MARK: Lifecycle

    /// Subscribes to the in topic and connects. Returns at once: a broker that is down is retried
    /// (with backoff) and logged, never fatal. Use `waitUntilConnected` to wait.
    public func start() throws {
        // One bounded inbox per device for messages and connection states, in the order they
        // happened, drained by a task only while something waits (DESIGN.md "Scale": no task per
        // idle device, bounded queues).
        if inbox == nil {
            inbox = client.makeInbox(limit: Self.inboundQueueLimit) { [weak self] in
                Task { await self?.drainInbox() }
            }
        }
        try client.subscribe(inTopic, qos: 1)
        // PROTOCOL.md 8.4: a low-power device also listens for its wake topic (and its meta
        // follows its awake state: the device publishes its presence itself).
        if power.config.lowPower {
            try client.subscribe(wakeTopic, qos: 1)
        } else if !presenceByTransport {
            presenceByTransport = client.setPresence(Self.presence(template: template, devId: devId, runtime: runtime))
        }
        log.log(.info, "starting", device: devId, fields: [
            ("broker", client.options.endpointDescription), ("security", profile.security.rawValue),
            ("answerPolicy", "\(engine.answerPolicy)"),
        ])
        client.connect()
    }

    /// Handles what waits in the inbox, in order, until it is empty (the inbox then wakes a new
    /// drain on its next item). Between batches it lets other work of the actor run.
    private func drainInbox() async {
        guard let inbox else { return }
        while true {
            let items = inbox.take()
            if items.isEmpty { return }
            for item in items {
                switch item {
                case .message(let message): receive(message)
                case .state(let state): connectionChanged(state)
                }
            }
            await Task.yield()
        }
    }

    /// Messages and states waiting for the device at most; past it they are dropped and counted
    /// (`mqttCounters.droppedInbound`).
    public static let inboundQueueLimit = 1024

    /// Waits until the device is reachable: connected, subscribed to its in topic (SUBACK seen)
    /// and its online status published. Anyone who sees it online can call it. Event-driven: the
    /// waiter is resumed when the device becomes ready (or at the timeout), never polled.
    public func waitUntilConnected(timeout: Duration = .seconds(5)) async -> Bool {
        if ready { return true }
        if stopped { return false }
        let token = nextWaiterToken
        nextWaiterToken &+= 1
        // The timeout runs on the injected scheduler (simulated time: when the clock advances).
        let timer = scheduler.schedule(after: timeout, on: clock) { [weak self] in
            await self?.resumeReadyWaiter(token, with: false)
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            readyWaiters[token] = continuation
        }
        scheduler.cancel(timer)
        return result
    }

    /// The device is going offline (a storm's drop): waiters wait for the next connection.
    func markNotReady() { ready = false }

    private func resumeReadyWaiter(_ token: UInt64, with value: Bool) {
        readyWaiters.removeValue(forKey: token)?.resume(returning: value)
    }

    private func resumeAllReadyWaiters(with value: Bool) {
        let waiting = readyWaiters
        readyWaiters.removeAll()
        for continuation in waiting.values { continuation.resume(returning: value) }
    }

    /// Clean shutdown (PROTOCOL.md 3.3): an answered call gets `hang_up`, a ringing incoming call
    /// `reject`, a ringing outgoing call `cancel` to every target, each with reason `shutdown`;
    /// then the retained status becomes offline (acknowledged by the broker) and the connection
    /// closes cleanly.
    public func stop(timeout: Duration = .milliseconds(1500)) async {
        guard !stopped else { return }
        let offline = endActivity()
        _ = await client.publishThenDisconnect(offline, acknowledgement: timeout, close: .seconds(1))
        client.close()
        finishStop()
    }

    /// `stop` in two halves, for a fleet stopping thousands at once (`Fleet.stop`: no task per
    /// device). This one ends the calls and hands the offline status to the connection, which
    /// sends DISCONNECT at its PUBACK; it waits for nothing.
    func beginStop(timeout: Duration) {
        guard !stopped else { return }
        client.beginGoodbye(endActivity(), acknowledgement: timeout)
    }

    /// The second half: waits until the connection is closed, then ends the device's streams. The
    /// client's handle is freed by its loop's shutdown (`Fleet.stop`), not here.
    func finishStop(timeout: Duration) async {
        guard stopped, !stopFinished else { return }
        _ = await client.waitUntilClosed(timeout: timeout + .seconds(1))
        finishStop()
    }

    /// Ends calls, power timers and links; returns the offline status to publish (nil when the
    /// device was never seen online on this connection).
    private func endActivity() -> MQTTMessage? {
        stopped = true
        run(host.shutdown())
        runPower(power.shutdown())
        powerTimers.cancelAll()
        for sessionId in Array(links.keys) { closeLink(sessionId, notifyPeer: false) }
        // The transport's presence may have gone out before the device saw `.connected`.
        let onlineByTransport = presenceByTransport && client.clearPresence()
        guard connected || onlineByTransport else { return nil }
        return MQTTMessage(topic: onlineTopic, payload: Array(#"{"online":false,"t":\#(clock.nowSeconds())}"#.utf8),
                           qos: 1, retain: true)
    }

    private func finishStop() {
        guard !stopFinished else { return }
        stopFinished = true
        inbox?.finish()
        resumeAllReadyWaiters(with: false)
        observers.finishAll()
        log.log(.info, "stopped", device: devId)
    }

    // MARK: Observing

    /// Every event from now on, in order. Finishes when the device stops.
    public func events() -> AsyncStream<DeviceEvent> {
        observers.add { [weak self] id in Task { await self?.removeObserver(id) } }
    }

    private func removeObserver(_ id: UInt64) { observers.remove(id) }

    /// The event is built only when someone observes the device (a fleet's devices mostly not:
    /// its connect line showed in a reconnect storm's profile).
    func emit(_ event: @autoclosure () -> DeviceEvent) {
        guard observers.count > 0 else { return }
        observers.emit(event())
    }

    public var status: DeviceStatus {
        DeviceStatus(devId: devId, connected: connected, phase: engine.phase, session: engine.session,
                     answerPolicy: engine.answerPolicy, actingBusy: engine.isActingBusy,
                     callsEnded: callsEnded, lastCall: lastCall, media: media, camera: camera)
    }

    /// The closed links' totals plus the open links' counters; fps is each open link's frames sent
    /// over its age, summed (derived on every read: no reader disturbs another).
    private var media: MediaTotals {
        var totals = closedMedia
        let now = clock.nowMs()
        for link in links.values {
            let stats = link.stats
            totals.framesSent += stats.videoFramesSent
            totals.framesReceived += stats.videoFramesReceived
            let ageMs = now.subtractingReportingOverflow(link.openedAtMs)
            if !ageMs.overflow, ageMs.partialValue > 0 { totals.fps += Double(stats.videoFramesSent) * 1000 / Double(ageMs.partialValue) }
        }
        totals.openLinks = links.count
        return totals
    }

    // MARK: Operator actions (the doorbell button, the control API)

    /// Presses the doorbell: calls `targets` (default: the household) with a new session id
    /// (PROTOCOL.md 3.2), or, for the doorbell kinds, announces a doorbell call (8.1). Returns the
    /// session (call) id.
    @discardableResult
    public func press(targets: [String] = [], callType: CallType? = nil, timeoutSeconds: Double? = nil) throws(CallActionError) -> String {
        // PROTOCOL.md 8.1: a doorbell kind announces the press over 43 instead (targets and call
        // type do not apply: every household app sees it); the id returned is the call id.
        if engine.isDoorbell { return try pressDoorbell(ringTimeoutSeconds: timeoutSeconds) }
        let sessionId = makeSessionId(devId: devId, using: &random)
        let press = DoorbellPress(sessionId: sessionId, targets: targets, callType: callType,
                                  timeoutMs: timeoutSeconds.map(WallClock.milliseconds(seconds:)))
        try perform(.press(press))
        return sessionId
    }

    public func answer() throws(CallActionError) { try perform(.answer) }
    public func reject() throws(CallActionError) { try perform(.reject) }
    public func cancel() throws(CallActionError) { try perform(.cancel) }
    public func hangUp() throws(CallActionError) { try perform(.hangUp) }
    public func setAnswerPolicy(_ policy: AnswerPolicy) throws(CallActionError) { try perform(.setAnswerPolicy(policy)) }
    public func setActingBusy(_ busy: Bool) throws(CallActionError) { try perform(.setActingBusy(busy)) }

    private func perform(_ action: LocalAction) throws(CallActionError) {
        run(try host.perform(action, fire: timerFire))
    }

    /// The media link of the answered session came up or went down (fed by the WebRTC layer).
    public func mediaLink(up: Bool, sessionId: String) {
        feed(up ? .mediaLinkUp(sessionId: sessionId) : .mediaLinkDown(sessionId: sessionId))
    }

    // MARK: Receiving

    private func connectionChanged(_ state: MQTTConnectionState) {
        switch state {
        case .connected:
            connected = true
            log.log(.info, "connected", device: devId, fields: [("broker", client.options.endpointDescription)])
            // Subscribed, and the presence published by the transport at the SUBACK.
            if presenceByTransport {
                becameReady()
                return
            }
            // Online only once the in topic is subscribed: whoever sees it online can call it.
            let client = self.client
            let subscriptions = power.config.lowPower ? [inTopic, wakeTopic] : [inTopic]
            Task { [weak self] in
                for topic in subscriptions {
                    do {
                        try await client.subscribeAndWait(topic, qos: 1, timeout: .seconds(5))
                    } catch {
                        self?.log.log(.warning, "no SUBACK for \(topic): \(error)", device: self?.devId)
                    }
                }
                await self?.becameReady()
            }
        case .disconnected(let reason):
            let was = connected
            connected = false
            ready = false
            if !stopped {
                // A drop we made on purpose (a fault) logs at the fault's level, once.
                let level = droppedOnPurpose.map { min($0, was ? .warning : .info) } ?? (was ? .warning : .info)
                if droppedOnPurpose != nil { droppedOnPurpose = nil }   // no activity made for a plain drop
                log.log(level, "broker unreachable, retrying", device: devId, fields: [("why", reason)])
            }
            emit(.connection(connected: false, detail: reason))
        case .connecting:
            break
        }
    }

    private func becameReady() {
        guard connected, !stopped else { return }
        if !presenceByTransport { publishPresence() }
        // PROTOCOL.md 8.3: "On connect ... the device reports all its DPs once"; 8.4: the idle
        // timer starts.
        reportAllDataPoints()
        runPower(power.start(now: clock.nowMs()))
        ready = true
        resumeAllReadyWaiters(with: true)
        emit(.connection(connected: true, detail: client.options.endpointDescription))
    }

    /// PROTOCOL.md 1 and 5: retained meta (always plain) and retained online status.
    private func publishPresence() {
        publishMeta()
        do {
            let online = Array(#"{"online":true,"t":\#(clock.nowSeconds())}"#.utf8)
            try client.publish(topic: onlineTopic, payload: online, qos: 1, retain: true)
        } catch {
            log.log(.error, "could not publish presence", device: devId, fields: [("why", "\(error)")])
        }
    }

    /// PROTOCOL.md 5 and 8.4: the retained meta (always plain), with the awake state of a
    /// low-power device.
    func publishMeta() {
        do {
            let sealed = try Self.metaPayload(template: template, devId: devId, awake: power.isAwake, t: clock.nowSeconds())
            try client.publish(topic: metaTopic, payload: sealed, qos: 1, retain: true)
        } catch {
            log.log(.error, "could not publish the meta", device: devId, fields: [("why", "\(error)")])
        }
    }

    /// The retained meta's bytes: the template's with this devId and t; else encoded in full.
    /// Plain: the meta's sealer keeps no state (made here rather than kept in every device).
    nonisolated static func metaPayload(template: DeviceTemplate, devId: String, awake: Bool, t: Int64) throws -> [UInt8] {
        if let made = template.metaPayload(devId: devId, awake: awake, t: t) { return made }
        var metaSealer = try PayloadSealer(mode: .plain, localKey: "", from: SealHeader.deviceFrom)
        return try metaSealer.seal(meta(template: template, devId: devId, awake: awake).envelope(t: t))
    }

    /// PROTOCOL.md 1 and 5 for a device that is always awake, as the transport publishes it at
    /// each connection's SUBACK (on its loop thread: no hop to the device): the retained meta,
    /// then the retained online status, as `publishPresence` sends them. It holds the template,
    /// the devId and the shared runtime, and makes the topics at each connect.
    nonisolated static func presence(template: DeviceTemplate, devId: String, runtime: DeviceRuntime) -> MQTTPresence {
        MQTTPresence {
            let t = runtime.context.clock.nowSeconds()
            let topics = template.profile.topics
            var messages: [MQTTMessage] = []
            messages.reserveCapacity(2)
            do {
                let meta = try metaPayload(template: template, devId: devId, awake: true, t: t)
                messages.append(MQTTMessage(topic: fill(topics.meta, devId), payload: meta, qos: 1, retain: true))
            } catch {
                runtime.log.log(.error, "could not publish the meta", device: devId, fields: [("why", "\(error)")])
            }
            let online = Array(#"{"online":true,"t":\#(t)}"#.utf8)
            messages.append(MQTTMessage(topic: fill(topics.meta, devId, suffix: "/online"), payload: online, qos: 1, retain: true))
            return messages
        }
    }

    /// One MQTT message: the wake topic (PROTOCOL.md 8.4) or the in topic.
    func receive(_ message: MQTTMessage) {
        if power.config.lowPower, message.topic == wakeTopic {
            receiveWake(payload: message.payload)
        } else {
            receive(payload: message.payload)
        }
    }

    /// One MQTT payload from the in topic. Anything refused is logged and dropped; nothing
    /// else changes (PROTOCOL.md 2.1, 3.4). Asleep, most protocols are dropped and counted
    /// (PROTOCOL.md 8.4).
    func receive(payload: [UInt8]) {
        let inbound: InboundMessage
        do {
            inbound = try opener.openMessage(payload, nowSeconds: clock.nowSeconds()).message
        } catch {
            refuse("dropped \(payload.count)-byte message: \(error)", kind: RefusalLog.Kind(error))
            return
        }
        guard admitWhileAsleep(inbound) else { return }
        switch inbound {
        case .call(let message):
            let effects = host.handle(.received(message), fire: timerFire)
            // A refused event (and the `stop` that answers it) logs at debug: its refusal line is
            // the rate-limited one, so a flood of them cannot flood the log (issue 10).
            let refused = effects.contains { if case .refused = $0 { true } else { false } }
            log.callEvent(.inbound, message, device: devId, level: refused ? .debug : .info)
            emit(.received(message))
            run(limitRefusalReplies(effects), quiet: refused)
        case .abilityQuery(let query):
            log.log(.info, "<- ability_query", device: devId, fields: [("from", query.curId), ("reqId", query.reqId)])
            publish(meta(awake: true).answering(query).envelope(t: clock.nowSeconds()), what: "ability")
        case .signal(let signal):
            receiveSignal(signal)
        case .abilityAnswer:
            refuse("dropped a 309 ability answer: a device does not take answers", kind: .malformed)
        case .videoDoorbell(let message):
            receiveDoorbell(message)
        case .dpSet(let set):
            receiveDPSet(set)
        case .dpQuery(let query):
            receiveDPQuery(query)
        case .streamControl(let control):
            receiveStreamControl(control)
        case .doorbellPress, .dpReport:
            // Only a device sends these (PROTOCOL.md 8.1, 8.3).
            refuse("dropped a protocol \(inbound.protocolNumber.rawValue) message: only a device sends it", kind: .malformed)
        }
    }

    /// Counts and reports a refused message; its log line is rate-limited (the count never is).
    func refuse(_ why: String, kind: RefusalLog.Kind) {
        let (write, suppressed) = refusals.record(kind, nowMs: clock.nowMs())
        if write {
            log.log(.warning, why, device: devId,
                    fields: suppressed > 0 ? [("suppressed", "\(suppressed) refusal lines since the last one")] : [])
        }
        emit(.refused(why: why))
    }

    // MARK: Fault injection (Device+Faults.swift)

    /// The faults in force.
    public internal(set) var faults = DeviceFaults()

    /// MQTT counters (reconnects, messages in and out).
    public nonisolated var mqttCounters: MQTTClientCounters { client.counters }
}
