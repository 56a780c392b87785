import CallEngine
import CallRuntime
import Foundation
import IPCWire
import MQTTTransport
import WebRTCLink

public enum AppError: Error, Sendable, Equatable, CustomStringConvertible {
    case noAnswer(what: String, seconds: Double)
    case unknownDevice(String)
    case notConnected(String)
    case wire(WireError)
    case mqtt(String)

    public var description: String {
        switch self {
        case .noAnswer(let what, let seconds): "no \(what) within \(seconds) s"
        case .unknownDevice(let devId): "device '\(devId)' is not known to this app (add its address first)"
        case .notConnected(let why): "not connected to the broker: \(why)"
        case .wire(let e): e.description
        case .mqtt(let why): why
        }
    }
}

/// The phone app signed in as one user, playing the SDK's side (`ThingSmartCallChannel`):
/// `fetchDeviceCallAbility`, `startCall`, `isOnCalling`, answer, reject, hang up, and delegate
/// events with the SDK error codes. It runs the same call engine as the device, in the app role.
public actor AppUser {
    public nonisolated let userId: String
    nonisolated let client: any MessageTransport
    let log: EventLog
    /// The clock the engine is fed from (injected; `SystemClock` unless a test gives another).
    public nonisolated let clock: any EngineClock
    /// Where its timers run (injected; `TimerScheduler.shared` unless a test or the simulator
    /// gives a `SimulatedClock`).
    public nonisolated let scheduler: any TimerScheduling
    /// The engine, its clock and its timers (CallRuntime's one engine host, as in `Device`).
    private var host: EngineHost<AppCallEngine>
    var engine: AppCallEngine { host.engine }
    var devices: [String: DeviceChannel] = [:]
    private var fallbackAddress: (@Sendable (String) -> DeviceAddress)?
    private var pendingProbes: [String: CheckedContinuation<AbilityAnswer?, Never>] = [:]
    private var observers = EventObservers<AppEvent>()
    private var pumps: [Task<Void, Never>] = []
    var random = SystemRandomNumberGenerator()
    var ended: [CallRecord] = []
    var videoLinks: [String: any AppMediaLink] = [:]
    /// What builds the P2P links (injected; the real GStreamer links unless a test or the
    /// simulator gives `SimulatedAppLinks`).
    public nonisolated let linkFactory: any AppLinkFactory
    /// Links made while their call rings, waiting for the answer (AppUser+PreparedVideo.swift).
    var preparedVideo: [String: PreparedVideoLink] = [:]
    /// PROTOCOL.md 4, app side: the device's answer, candidates and disconnect count only from the
    /// device the link was opened to (sans-IO, CallEngine).
    var linkRules = P2PLinkRules(app: ())
    var videoPumps: [String: Task<Void, Never>] = [:]
    var finishedVideo: [String: VideoStats] = [:]
    var finishedTimelines: [String: LinkTimeline] = [:]
    var finishedHEVC: [String: AppHEVCReceiver.Report] = [:]
    var answeredAt: [String: Date] = [:]
    /// `close_reason` of each session's link the device closed with `disconnect`.
    var disconnects: [String: Int64] = [:]
    /// This app's `from` value in pv2.x headers: low 31 bits of CRC32(userId) + 2^31 (PROTOCOL.md 2.1).
    public nonisolated let sealFrom: UInt32
    /// PROTOCOL.md 8.1, 8.2: the doorbell calls (43 presses, `video_doorbell`), a second engine on
    /// the same host type (AppUser+Doorbell.swift).
    var doorbellHost: EngineHost<AppDoorbellEngine>
    /// PROTOCOL.md 8.3, 8.4, 8.6: the DP cache and the waits for reports and 312 replies
    /// (AppUser+DataPoints.swift, AppUser+Wake.swift, AppUser+StreamControl.swift).
    var doorbellSide = AppDoorbellSide()
    /// Waits for a retained meta's `awake` (AppUser+Wake.swift).
    var metaWaits: [UInt64: MetaWait] = [:]

    /// - Parameters:
    ///   - connection: the broker; the client id is made from the user id.
    ///   - config: heartbeat timers and listen-mode policy (`incomingPolicy`).
    public init(userId: String, connection: MQTTClientOptions, config: AppEngineConfig? = nil,
                eventLoop: MQTTEventLoop? = nil, log: EventLog = EventLog(minimumLevel: .warning),
                timers: (any TimerScheduling)? = nil, clock: any EngineClock = SystemClock(),
                links: (any AppLinkFactory)? = nil) throws {
        var options = connection
        options.clientID = "app-\(userId)-\(UInt32.random(in: 0...UInt32.max))"
        let client = try MQTTClient(options: options, eventLoop: eventLoop)
        self.init(userId: userId, transport: client, config: config, log: log, timers: timers, clock: clock, links: links)
    }

    /// The app user on a transport of the caller's (issue 9: driven without a broker in a test).
    public init(userId: String, transport: any MessageTransport, config: AppEngineConfig? = nil,
                log: EventLog = EventLog(minimumLevel: .warning), timers: (any TimerScheduling)? = nil,
                clock: any EngineClock = SystemClock(), links: (any AppLinkFactory)? = nil) {
        self.userId = userId
        self.linkFactory = links ?? GStreamerAppLinks()
        self.log = log
        self.clock = clock
        let scheduler = timers ?? TimerScheduler.shared
        self.scheduler = scheduler
        self.host = EngineHost(engine: AppCallEngine(config: config ?? AppEngineConfig(userId: userId)), clock: clock,
                               scheduler: scheduler)
        self.doorbellHost = EngineHost(engine: AppDoorbellEngine(config: Self.doorbellConfig(config ?? AppEngineConfig(userId: userId))),
                                       clock: clock, scheduler: scheduler)
        self.doorbellSide.scheduler = scheduler
        self.sealFrom = (CRC32.checksum(Array(userId.utf8)) & 0x7FFF_FFFF) | 0x8000_0000
        self.client = transport
    }

    // MARK: Lifecycle

    /// Connects and waits for the broker (up to `timeout`).
    public func start(timeout: Duration = .seconds(5)) async throws(AppError) {
        // One ordered stream of messages and connection states (bounded: a listen-mode app on a
        // busy broker cannot grow without limit; drops are counted in the client's counters).
        let inbound = client.makeInboundStream(limit: Self.inboundQueueLimit)
        pumps.append(Task { [weak self] in
            for await item in inbound {
                switch item {
                case .message(let message): await self?.receive(message)
                case .state(let state): await self?.connectionChanged(state)
                }
            }
        })
        client.connect()
        guard await client.waitUntilConnected(timeout: timeout) else {
            throw .notConnected("\(client.state) (\(client.options.endpointDescription))")
        }
    }

    /// Messages and states waiting for the app at most (past it they are dropped and counted).
    public static let inboundQueueLimit = 1 << 16

    /// Leaves: hangs up/cancels/rejects whatever call is on (reason `shutdown`), disconnects.
    public func stop() async {
        run(host.shutdown())
        runDoorbell(doorbellHost.shutdown())
        for sessionId in Array(videoLinks.keys) { closeVideo(sessionId: sessionId) }
        for sessionId in Array(preparedVideo.keys) { discardPreparedVideo(sessionId: sessionId, why: "the app stopped") }
        _ = await client.disconnectAndWait(timeout: .seconds(1))
        client.close()
        for pump in pumps { pump.cancel() }
        observers.finishAll()
        for (_, c) in pendingProbes { c.resume(returning: nil) }
        pendingProbes.removeAll()
        for token in Array(metaWaits.keys) { endMetaWait(token) }
        endDoorbellWaits()
    }

    /// The app vanishes without a word (phone out of coverage): the socket closes, nothing is sent.
    public func vanish() {
        host.cancelAllTimers()
        doorbellHost.cancelAllTimers()
        client.disconnectAbruptly(reconnect: false)
    }

    /// Makes a device reachable: subscribes to its out topic. Waits for the SUBACK.
    public func add(_ address: DeviceAddress) async throws(AppError) {
        guard devices[address.devId] == nil else { return }
        devices[address.devId] = try DeviceChannel(address: address, from: sealFrom)
        do {
            try await client.subscribeAndWait(address.outTopic, qos: 1, timeout: .seconds(5))
        } catch {
            throw .mqtt("subscribe \(address.outTopic): \(error)")
        }
    }

    /// Listen mode: takes calls from any device on the default topics (`smart/device/out/+`);
    /// `address` tells how to reach a device first heard of there (default: plain, default topics).
    public func listenToAllDevices(address: (@Sendable (String) -> DeviceAddress)? = nil) async throws(AppError) {
        fallbackAddress = address ?? { DeviceAddress(devId: $0) }
        do {
            try await client.subscribeAndWait(DeviceAddress.everyDeviceOutFilter, qos: 1, timeout: .seconds(5))
        } catch {
            throw .mqtt("subscribe \(DeviceAddress.everyDeviceOutFilter): \(error)")
        }
    }

    // MARK: Observing

    public func events() -> AsyncStream<AppEvent> {
        observers.add { [weak self] id in Task { await self?.removeObserver(id) } }
    }

    private func removeObserver(_ id: UInt64) { observers.remove(id) }

    func emit(_ event: AppEvent) { observers.emit(event) }

    // MARK: The SDK's calls

    /// `fetchDeviceCallAbilityByDevId`: asks the device itself (protocol 309).
    public func fetchDeviceCallAbility(devId: String, timeout: Duration = .seconds(3)) async throws(AppError) -> AbilityAnswer {
        guard devices[devId] != nil else { throw .unknownDevice(devId) }
        let reqId = "\(userId)-\(UInt64.random(in: 0...UInt64.max, using: &random))"
        let query = AbilityQuery(curId: userId, reqId: reqId)
        try publish(query.envelope(t: clock.nowSeconds()), to: devId)
        let timer = scheduler.schedule(after: timeout, on: clock) { [weak self] in await self?.resolveProbe(reqId, with: nil) }
        let answer = await withCheckedContinuation { (c: CheckedContinuation<AbilityAnswer?, Never>) in
            pendingProbes[reqId] = c
        }
        scheduler.cancel(timer)
        guard let answer else {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            throw .noAnswer(what: "ability answer from \(devId)", seconds: seconds)
        }
        return answer
    }

    private func resolveProbe(_ reqId: String, with answer: AbilityAnswer?) {
        pendingProbes.removeValue(forKey: reqId)?.resume(returning: answer)
    }

    /// A new session id of this user's, for `startCall(sessionId:)` (PROTOCOL.md 3: the caller
    /// chooses it): a link can be prepared for the call before it goes out.
    public func newCallSessionId() -> String { makeSessionId(devId: userId, using: &random) }

    /// `startCall`: calls a device; returns the session id (`sessionId`, else a new one). Throws
    /// `onCalling` (-2520) when a call is on.
    @discardableResult
    public func startCall(devId: String, timeoutSeconds: Int64 = 30, callType: CallType = .oneToOne,
                          extra: CallExtra = CallExtra(), sessionId chosen: String? = nil) throws(CallActionError) -> String {
        let sessionId = chosen ?? makeSessionId(devId: userId, using: &random)
        let start = StartCall(targetId: devId, sessionId: sessionId, timeoutSeconds: timeoutSeconds,
                              callType: callType, extra: extra)
        run(try host.perform(.startCall(start), fire: timerFire))
        return sessionId
    }

    public var isOnCalling: Bool { engine.isOnCalling }
    public var session: CallSessionSnapshot? { engine.session }
    public var phase: CallPhase { engine.phase }
    public var endedCalls: [CallRecord] { ended }

    public func answer() throws(CallActionError) { try perform(.answer) }
    public func reject() throws(CallActionError) { try perform(.reject) }
    public func busy() throws(CallActionError) { try perform(.busy) }
    public func cancel() throws(CallActionError) { try perform(.cancel) }
    public func hangUp() throws(CallActionError) { try perform(.hangUp) }
    public func setIncomingPolicy(_ policy: AnswerPolicy) throws(CallActionError) { try perform(.setAnswerPolicy(policy)) }

    private func perform(_ action: LocalAction) throws(CallActionError) {
        run(try host.perform(action, fire: timerFire))
    }

    /// Publishes an already-built envelope to a device, sealed for it (tests, P2P signalling).
    public func send(_ envelope: Envelope, to devId: String) throws(AppError) {
        try publish(envelope, to: devId)
    }

    /// Tells the engine the P2P link of the session came up or went down.
    public func mediaLink(up: Bool, sessionId: String) {
        feed(up ? .mediaLinkUp(sessionId: sessionId) : .mediaLinkDown(sessionId: sessionId))
        feedDoorbell(up ? .mediaLinkUp(sessionId: sessionId) : .mediaLinkDown(sessionId: sessionId))
    }

    // MARK: Receiving

    private func connectionChanged(_ state: MQTTConnectionState) {
        switch state {
        case .connected: emit(.connection(connected: true, detail: client.options.endpointDescription))
        case .disconnected(let reason): emit(.connection(connected: false, detail: reason))
        case .connecting: break
        }
    }

    private func receive(_ message: MQTTMessage) {
        if receiveMeta(message) { return }  // PROTOCOL.md 5, 8.4: a watched meta (AppUser+Wake.swift)
        guard let devId = channelId(for: message.topic) else { return }
        let inbound: InboundMessage
        do {
            guard var channel = devices[devId] else { return }
            inbound = try channel.opener.openMessage(message.payload).message
            devices[devId] = channel
        } catch {
            let why = "dropped message on \(message.topic): \(error)"
            log.log(.warning, why, device: userId)
            emit(.refused(why: why))
            return
        }
        switch inbound {
        case .call(let m):
            guard m.targetId == userId else { return }   // another user's message on the device's topic
            log.callEvent(.inbound, m, device: userId)
            emit(.received(m, devId: devId))
            feed(.received(m))
        case .abilityAnswer(let answer):
            if case .answer(let target, let reqId) = answer.kind, target == userId {
                resolveProbe(reqId, with: answer)
            }
        case .signal(let s):
            guard s.header.to == userId else { return }
            emit(.signal(s, devId: devId))
            receiveSignal(s)
        case .abilityQuery:
            break
        case .videoDoorbell, .doorbellPress, .dpReport, .streamControl:
            receiveDoorbellSide(inbound, devId: devId)  // PROTOCOL.md 8: AppUser+Doorbell.swift
        case .dpSet, .dpQuery:
            break  // app -> device only (another app's, on a topic this app reads)
        }
    }

    /// The device a message on `topic` comes from (adding it in listen mode).
    private func channelId(for topic: String) -> String? {
        if let known = devices.first(where: { $0.value.address.outTopic == topic })?.key { return known }
        guard let fallbackAddress, let devId = DeviceAddress.devId(fromDefaultOutTopic: topic) else { return nil }
        do {
            devices[devId] = try DeviceChannel(address: fallbackAddress(devId), from: sealFrom)
        } catch {
            log.log(.warning, "cannot talk to \(devId): \(error)", device: userId)
            return nil
        }
        return devId
    }

    // MARK: Effects

    /// Feeds one input to the engine (through the host, which keeps the timers).
    private func feed(_ input: CallInput) { run(host.handle(input, fire: timerFire)) }

    /// What a due timer calls: back onto this actor.
    private nonisolated var timerFire: @Sendable (CallTimer) async -> Void {
        { [weak self] timer in await self?.feed(.timerFired(timer)) }
    }

    private func run(_ effects: [CallEffect]) {
        for effect in effects {
            switch effect {
            case .send(let m):
                log.callEvent(.outbound, m, device: userId)
                do {
                    try publish(m.envelope(t: clock.nowSeconds()), to: m.targetId)
                    emit(.sent(m, devId: m.targetId))
                } catch {
                    log.log(.error, "could not send \(m.event.rawValue): \(error)", device: userId)
                }
            case .armTimer, .cancelTimer:
                break  // the host keeps the timers
            case .startRinging(let sessionId):
                emit(.incomingCall(sessionId: sessionId, devId: engine.session?.peers.first ?? ""))
            case .stopRinging:
                break
            case .peerRinging(let sessionId, let peer):
                emit(.deviceRinging(sessionId: sessionId, devId: peer))
            case .expectMediaLink(let sessionId, _):
                answeredAt[sessionId] = clockDate()
            case .closeMediaLink(let sessionId):
                closeVideo(sessionId: sessionId)
            case .callEnded(let record):
                discardPreparedVideo(sessionId: record.sessionId, why: "the call ended (\(record.outcome.rawValue))")
                ended.append(record)
                emit(.callEnded(record))
            case .refused(let m, let why):
                let line = "refused \(m.event.rawValue) session=\(m.sessionId): \(why)"
                log.log(.info, line, device: userId)
                emit(.refused(why: line))
            case .actionRefused:
                break
            case .sendDoorbell, .announcePress, .ringTimedOut, .leaveMessage, .refusedDoorbell:
                break  // PROTOCOL.md 8: the §3 app engine makes none of these
            }
        }
    }

    /// The clock's time as a `Date` (what a link's timeline counts from).
    func clockDate() -> Date { Date(timeIntervalSince1970: Double(clock.nowMs()) / 1000) }

    func publish(_ envelope: Envelope, to devId: String) throws(AppError) {
        guard var channel = devices[devId] else { throw .unknownDevice(devId) }
        let payload: [UInt8]
        do {
            payload = try channel.sealer.seal(envelope)
        } catch {
            throw .wire(error)
        }
        devices[devId] = channel
        do {
            try client.publish(topic: channel.address.inTopic, payload: payload, qos: 1, retain: false)
        } catch {
            throw .mqtt("publish to \(channel.address.inTopic): \(error)")
        }
    }
}

/// Per device: its address and the sealing state in both directions.
struct DeviceChannel: Sendable {
    var address: DeviceAddress
    var sealer: PayloadSealer
    var opener: PayloadOpener

    init(address: DeviceAddress, from: UInt32) throws(AppError) {
        self.address = address
        do {
            sealer = try PayloadSealer(mode: address.security, localKey: address.localKey, from: from)
            opener = try PayloadOpener(mode: address.security, localKey: address.localKey)
        } catch {
            throw .wire(error)
        }
    }
}
