import CallEngine
import IPCWire

/// What a scenario device is made of (from its profile, by the scenario world).
public struct ScenarioSimDeviceSetup: Sendable {
    public var devId: String
    public var engine: DeviceSideEngine
    /// The profile's `doorbell.kind` (`screen_ipc`, `ac_doorbell`, `doorbell`): the 43's `etype`.
    public var kind: String
    public var secrets: P2PLinkRules.DeviceSecrets
    /// The profile's streams (main and sub): what a link sends once up.
    public var video: [StreamType: VideoStreamFormat]
    /// The device's DPs (PROTOCOL.md 8.3: the profile's `dps`), nil for none.
    public var dataPoints: DataPointStore?
    /// Sleep, wake and battery (8.4); nil: a device that never sleeps.
    public var power: PowerConfig?
    /// The simulated camera's names and DP values (8.5); nil: snapshots and messages cannot be taken.
    public var media: ScenarioSimMedia?
    /// `doorbell.messageSeconds` (8.5).
    public var messageSeconds: Int

    public init(devId: String, engine: DeviceSideEngine, kind: String, secrets: P2PLinkRules.DeviceSecrets,
                video: [StreamType: VideoStreamFormat] = [:], dataPoints: DataPointStore? = nil,
                power: PowerConfig? = nil, media: ScenarioSimMedia? = nil, messageSeconds: Int = 10) {
        self.devId = devId
        self.engine = engine
        self.kind = kind
        self.secrets = secrets
        self.video = video
        self.dataPoints = dataPoints
        self.power = power
        self.media = media
        self.messageSeconds = messageSeconds
    }
}

/// What happened in a scenario simulation: the same things `Device` and `AppUser` report.
public enum ScenarioSimEvent: Sendable {
    case device(String, DeviceSide)
    case user(String, UserSide)

    public enum DeviceSide: Sendable {
        case sent(CallMessage)
        case received(CallMessage)
        case ringing(String)
        case ringingStopped(String)
        case callEnded(CallRecord)
        case refused(String)
        case offerRefused(session: String, from: String, why: String)
        case connection(up: Bool, detail: String)
        case sentDoorbell(VideoDoorbellMessage)
        case receivedDoorbell(VideoDoorbellMessage)
        case pressed(callId: String)
        case dataPointsReported([DPEntry])
        case fellAsleep
        case wokeUp(latencyMs: Int64)
        case mediaStored(name: String, path: String)
    }

    public enum UserSide: Sendable {
        case sent(CallMessage, devId: String)
        case received(CallMessage, devId: String)
        case incomingCall(session: String, devId: String)
        case deviceRinging(session: String, devId: String)
        case callEnded(CallRecord)
        case refused(String)
        case signal(SignalMessage, devId: String)
        case doorbellPressed(DoorbellPressMessage)
        case doorbellRinging(devId: String, callId: String, atMs: Int64)
        case doorbellSent(VideoDoorbellMessage)
        case doorbellReceived(VideoDoorbellMessage)
        /// A video frame arrived on the link of `session` (no pixels: the stats count it).
        case videoFrame(session: String)
        case dpReport(devId: String, dps: [DPId: DPValue])
    }
}

/// One device of a scenario simulation: the real engine and link rules, and the glue's state.
struct ScenarioSimDevice {
    let devId: String
    let kind: String
    var engine: DeviceSideEngine
    var linkRules: P2PLinkRules
    var limiter = RefusalReplyLimiter()
    let auth: String
    /// Users who read its out topic.
    var readers: [Int] = []
    var timers: [CallTimer: UInt64] = [:]
    var connected = true
    var epoch = 0
    /// Open links: session -> the user at the other end.
    var links: [String: Int] = [:]
    /// The profile's streams, the stream each link's offer asked for, and the streams being sent.
    let video: [StreamType: VideoStreamFormat]
    var offeredStreams: [String: StreamType] = [:]
    var streams: [String: ScenarioSimStream] = [:]
    var dataPoints: DataPointStore?
    var power: PowerMachine
    var powerTimers: [CallTimer: UInt64] = [:]
    let media: ScenarioSimMedia?
    let messageSeconds: Int
    let localKey: [UInt8]
    /// The last presses' snapshot paths (at most 8, as `Device` keeps them).
    var pressSnapshots: [String: String] = [:]
    var pressOrder: [String] = []
    var heartbeatRepliesSuppressed = false
    var replyDelayMs: Int64 = 0
    /// When the last delayed reply goes out (delayed replies keep their order).
    var lastDelayedAt: Int64 = 0

    init(setup: ScenarioSimDeviceSetup) {
        devId = setup.devId
        kind = setup.kind
        engine = setup.engine
        video = setup.video
        dataPoints = setup.dataPoints
        power = PowerMachine(config: setup.power ?? PowerConfig(devId: setup.devId, lowPower: false))
        media = setup.media
        messageSeconds = setup.messageSeconds
        localKey = Array(setup.secrets.localKey.utf8)
        linkRules = P2PLinkRules(device: setup.secrets)
        auth = P2PAuth.compute(p2pPassword: setup.secrets.p2pPassword, localKey: setup.secrets.localKey, devId: setup.devId)
    }
}

/// The device glue, as `Device` does it, and the operator's actions and faults.
extension ScenarioSimulation {
    // MARK: Operator actions

    /// The doorbell button: a §3 press (PROTOCOL.md 3.2) or a doorbell's 43 (8.1); the session or call id.
    public func press(device devId: String, targets: [String], callType: CallType?, timeoutSeconds: Double?) throws(CallActionError) -> String {
        let d = try device(devId)
        let timeoutMs = timeoutSeconds.map { Int64(($0 * 1000).rounded()) }
        if devices[d].engine.isDoorbell {
            runPower(d, devices[d].power.press(now: now))
            let callId = makeDoorbellCallId(unixSeconds: now / 1000, using: &rng)
            let effects = try devices[d].engine.perform(.press(DoorbellPress(sessionId: callId, timeoutMs: timeoutMs)), now: now)
            var id = callId
            for case .leaveMessage(let missed) in effects { id = missed }
            runDevice(d, effects)
            return id
        }
        let session = makeSessionId(devId: devId, using: &rng)
        try perform(d, .press(DoorbellPress(sessionId: session, targets: targets, callType: callType, timeoutMs: timeoutMs)))
        return session
    }

    /// The operator's answer, reject, cancel, hang-up, answer policy, acting busy.
    public func act(device devId: String, _ action: LocalAction) throws(CallActionError) {
        try perform(try device(devId), action)
    }

    public func phase(device devId: String) -> CallPhase? { deviceIndex[devId].map { devices[$0].engine.phase } }
    public func isConnected(device devId: String) -> Bool { deviceIndex[devId].map { devices[$0].connected } ?? false }
    public func isDoorbell(device devId: String) -> Bool { deviceIndex[devId].map { devices[$0].engine.isDoorbell } ?? false }

    // MARK: Faults

    /// Drops the MQTT connection (in-flight messages to it are lost) and reconnects after `seconds`.
    public func dropConnection(device devId: String, seconds: Double) {
        guard let d = deviceIndex[devId], devices[d].connected else { return }
        devices[d].connected = false
        devices[d].epoch += 1
        events.append(.device(devId, .connection(up: false, detail: "dropped on purpose (fault)")))
        let ms = seconds.isFinite ? Int64((min(max(0, seconds), 86_400) * 1000).rounded()) : 0
        schedule(.reconnect(device: d, epoch: devices[d].epoch), after: ms)
    }

    func reconnect(_ d: Int, epoch: Int) {
        guard devices[d].epoch == epoch, !devices[d].connected else { return }
        devices[d].connected = true
        events.append(.device(devices[d].devId, .connection(up: true, detail: "simulated broker")))
    }

    /// Every P2P link of the device drops as if the network failed (both ends see the link lost).
    public func dropLinks(device devId: String) {
        guard let d = deviceIndex[devId] else { return }
        for (session, user) in devices[d].links.sorted(by: { $0.key < $1.key }) {
            devices[d].links.removeValue(forKey: session)
            devices[d].linkRules.closed(sessionId: session)
            stopStream(device: d, session: session)
            users[user].links.removeValue(forKey: session)
            noteStreamsChanged(d)
            feedDevice(d, .mediaLinkDown(sessionId: session))
            feedUser(user, slot(of: session, user: user), .mediaLinkDown(sessionId: session))
            noteSessionsChanged(d)
        }
    }

    /// The faults in force: heartbeat replies suppressed, the reply delay.
    public func faults(device devId: String) -> (heartbeatRepliesSuppressed: Bool, replyDelayMs: Int64) {
        guard let d = deviceIndex[devId] else { return (false, 0) }
        return (devices[d].heartbeatRepliesSuppressed, devices[d].replyDelayMs)
    }

    public func isActingBusy(device devId: String) -> Bool { deviceIndex[devId].map { devices[$0].engine.isActingBusy } ?? false }

    public func setFaults(device devId: String, heartbeatRepliesSuppressed: Bool, replyDelayMs: Int64) {
        guard let d = deviceIndex[devId] else { return }
        devices[d].heartbeatRepliesSuppressed = heartbeatRepliesSuppressed
        devices[d].replyDelayMs = min(max(0, replyDelayMs), 86_400_000)
    }

    // MARK: Receiving

    func deviceReceives(_ d: Int, _ bytes: [UInt8]) {
        let devId = devices[d].devId
        let inbound: InboundMessage
        switch decode(bytes) {
        case .success(let m): inbound = m
        case .failure(let error):
            events.append(.device(devId, .refused("dropped \(bytes.count)-byte message: \(error)")))
            return
        }
        guard admitWhileAsleep(d, inbound) else { return }
        switch inbound {
        case .call(let message):
            events.append(.device(devId, .received(message)))
            feedDevice(d, .received(message), limited: true)
        case .videoDoorbell(let message):
            events.append(.device(devId, .receivedDoorbell(message)))
            feedDevice(d, .receivedDoorbell(message), limited: true)
        case .signal(let signal):
            deviceSignal(d, signal)
        case .dpSet(let set):
            guard set.devId == devId else {
                events.append(.device(devId, .refused("dropped a protocol 5 for '\(set.devId)', not this device")))
                return
            }
            applyDPSet(d, set.dps, from: set.uid)
        case .dpQuery(let query):
            guard query.devId == devId else {
                events.append(.device(devId, .refused("dropped a protocol 31 for '\(query.devId)', not this device")))
                return
            }
            publishReport(d, devices[d].dataPoints?.report(ids: query.dpIds ?? []) ?? [])
        case .abilityQuery, .abilityAnswer, .doorbellPress, .dpReport, .streamControl:
            events.append(.device(devId, .refused("dropped a protocol \(inbound.protocolNumber.rawValue) message (not simulated)")))
        }
    }

    func device(_ devId: String) throws(CallActionError) -> Int {
        guard let d = deviceIndex[devId] else { throw .invalidArgument("no device '\(devId)'") }
        return d
    }

    private func perform(_ d: Int, _ action: LocalAction) throws(CallActionError) {
        runDevice(d, try devices[d].engine.perform(action, now: now))
    }

    func feedDevice(_ d: Int, _ input: CallInput, limited: Bool = false) {
        var effects = devices[d].engine.handle(input, now: now)
        if limited { effects = devices[d].limiter.limitReplies(in: effects, now: now).effects }
        runDevice(d, effects)
    }

    func runDevice(_ d: Int, _ effects: [CallEffect]) {
        let devId = devices[d].devId
        defer { if !effects.isEmpty { noteSessionsChanged(d) } }
        for effect in effects {
            switch effect {
            case .send(let message):
                if message.event == .heartbeat, devices[d].heartbeatRepliesSuppressed { continue }
                devicePublish(d, message.envelope(t: now / 1000))
                events.append(.device(devId, .sent(message)))
            case .sendDoorbell(let message):
                devicePublish(d, message.envelope(t: now / 1000))
                events.append(.device(devId, .sentDoorbell(message)))
            case .armTimer(let timer, let at):
                let token = newToken()
                devices[d].timers[timer] = token
                schedule(.timer(.device(d), .call, timer, token: token), after: at &- now)
            case .cancelTimer(let timer):
                devices[d].timers.removeValue(forKey: timer)
            case .startRinging(let session):
                events.append(.device(devId, .ringing(session)))
            case .stopRinging(let session):
                events.append(.device(devId, .ringingStopped(session)))
            case .announcePress(let callId):
                let press = DoorbellPressMessage(devId: devId, etype: devices[d].kind, edata: callId)
                devicePublish(d, press.envelope(t: now / 1000))
                events.append(.device(devId, .pressed(callId: callId)))
                scheduleMedia(d, .pressSnapshot(callId: callId, unixSeconds: now / 1000))
            case .ringTimedOut(let callId):
                reportRingTimeout(d, callId: callId)
            case .leaveMessage(let callId):
                scheduleMedia(d, .message(callId: callId))
            case .closeMediaLink(let session):
                closeDeviceLink(d, session)
            case .callEnded(let record):
                events.append(.device(devId, .callEnded(record)))
            case .refused(let m, let why):
                events.append(.device(devId, .refused("refused \(m.event.rawValue) session=\(m.sessionId) from=\(m.curId): \(why)")))
            case .refusedDoorbell(let m, let why):
                events.append(.device(devId, .refused("refused video_doorbell \(m.event.rawValue) call=\(m.eData): \(why)")))
            case .expectMediaLink, .peerRinging, .actionRefused:
                break
            }
        }
    }

    /// Publishes on the device's out topic, `replyDelayMs` late when that fault is on.
    private func devicePublish(_ d: Int, _ envelope: Envelope) {
        guard devices[d].replyDelayMs > 0 else {
            publish(envelope, from: .device(d), topic: .deviceOut(d))
            return
        }
        let at = max(now &+ devices[d].replyDelayMs, devices[d].lastDelayedAt)
        devices[d].lastDelayedAt = at
        queue.push(.publish(device: d, bytes: envelope.encoded()), at: at)
    }

    func fire(_ node: Node, _ slot: EngineSlot, _ timer: CallTimer, token: UInt64) {
        switch node {
        case .device(let d):
            guard devices[d].timers[timer] == token else { return }
            devices[d].timers.removeValue(forKey: timer)
            feedDevice(d, .timerFired(timer))
        case .user(let u):
            guard users[u].timers[slot]?[timer] == token else { return }
            users[u].timers[slot]?.removeValue(forKey: timer)
            feedUser(u, slot, .timerFired(timer))
        }
    }

    // MARK: P2P links (PROTOCOL.md 4)

    private func deviceSignal(_ d: Int, _ signal: SignalMessage) {
        let h = signal.header
        let devId = devices[d].devId
        guard h.to == devId else {
            events.append(.device(devId, .refused("dropped 302 \(signal.type.rawValue) for '\(h.to)'")))
            return
        }
        switch signal.body {
        case .offer(let offer):
            let answered = devices[d].engine.answeredCall.map { (sessionId: $0.sessionId, peer: $0.peer) }
            switch devices[d].linkRules.receiveOffer(sessionId: h.sessionId, from: h.from, auth: offer.auth, answeredCall: answered) {
            case .refuse(let why):
                var reply = h.reply()
                reply.from = devId
                publish(SignalMessage(header: reply, body: .disconnect(SignalDisconnect(closeReason: SignalDisconnect.unauthorised)))
                    .envelope(t: now / 1000), from: .device(d), topic: .deviceOut(d))
                events.append(.device(devId, .offerRefused(session: h.sessionId, from: h.from, why: why)))
            case .open:
                guard let u = userIndex[h.from] else { return }
                devices[d].links[h.sessionId] = u
                devices[d].offeredStreams[h.sessionId] = offer.streamType
                stopStream(device: d, session: h.sessionId)  // a replaced link's stream
                noteSessionsChanged(d)
                noteStreamsChanged(d)
                schedule(.linkUp(device: d, session: h.sessionId, user: u), after: Self.linkConnectMs)
            }
        case .disconnect:
            guard devices[d].linkRules.receiveDisconnect(sessionId: h.sessionId, from: h.from) else { return }
            devices[d].links.removeValue(forKey: h.sessionId)
            stopStream(device: d, session: h.sessionId)
            noteStreamsChanged(d)
            feedDevice(d, .mediaLinkDown(sessionId: h.sessionId))
            noteSessionsChanged(d)
        case .candidate, .answer, .resolution:
            break
        }
    }

    /// The link connected: both ends' engines hear it.
    func linkUp(device d: Int, session: String, user u: Int) {
        guard devices[d].links[session] == u, users[u].links[session] == d else { return }
        startStream(device: d, session: session, user: u)
        feedDevice(d, .mediaLinkUp(sessionId: session))
        feedUser(u, slot(of: session, user: u), .mediaLinkUp(sessionId: session))
    }

    /// The device closes a link (its call ended): the app gets `disconnect` (close_reason 0).
    private func closeDeviceLink(_ d: Int, _ session: String) {
        devices[d].linkRules.closed(sessionId: session)
        stopStream(device: d, session: session)
        guard let u = devices[d].links.removeValue(forKey: session) else { return }
        noteStreamsChanged(d)
        let header = SignalHeader(from: devices[d].devId, to: users[u].userId, sessionId: session)
        publish(SignalMessage(header: header, body: .disconnect(SignalDisconnect(closeReason: 0))).envelope(t: now / 1000),
                from: .device(d), topic: .deviceOut(d))
    }
}
