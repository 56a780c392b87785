import CallEngine
import IPCWire

/// One app user of a scenario simulation: the real §3 and doorbell app engines, and the glue's state.
struct ScenarioSimUser {
    let userId: String
    var call: AppCallEngine
    var bell: AppDoorbellEngine
    /// Devices whose out topic it reads.
    var devices: [Int] = []
    var timers: [EngineSlot: [CallTimer: UInt64]] = [.call: [:], .doorbell: [:]]
    /// Open links: session -> device.
    var links: [String: Int] = [:]
    /// The `tid` of each link's offer (PROTOCOL.md 4): a reply to an earlier offer leaves the link alone.
    var linkTids: [String: String] = [:]
    /// What it decoded on each link, by session.
    var video: [String: ScenarioSimVideoStats] = [:]
    /// When it knew each call was answered (unix ms).
    var answeredAt: [String: Int64] = [:]
    /// The last DP values each device reported (the app's cache), and when each arrived.
    var dps: [String: [DPId: DPValue]] = [:]
    var dpsSeenAt: [String: [DPId: (value: DPValue, atMs: Int64)]] = [:]

    init(userId: String, call: AppCallEngine, bell: AppDoorbellEngine) {
        self.userId = userId
        self.call = call
        self.bell = bell
    }
}

/// The app glue, as `AppUser` does it, and the user's actions (the SDK's calls).
extension ScenarioSimulation {
    // MARK: The user's actions

    /// `startCall` (PROTOCOL.md 3.1); the session id.
    public func startCall(user userId: String, devId: String, timeoutSeconds: Int64, callType: CallType,
                          channelType: ChannelType) throws(CallActionError) -> String {
        let u = try user(userId)
        guard let d = deviceIndex[devId], users[u].devices.contains(d) else {
            throw .invalidArgument("device '\(devId)' is not known to \(userId)")
        }
        let session = makeSessionId(devId: userId, using: &rng)
        let start = StartCall(targetId: devId, sessionId: session, timeoutSeconds: timeoutSeconds, callType: callType,
                              extra: CallExtra(channelType: channelType.rawValue))
        runUser(u, .call, try users[u].call.perform(.startCall(start), now: now))
        return session
    }

    /// Answer, reject, busy, cancel, hang up, the incoming policy: on the §3 engine.
    public func act(user userId: String, _ action: LocalAction) throws(CallActionError) {
        let u = try user(userId)
        runUser(u, .call, try users[u].call.perform(action, now: now))
    }

    /// Accept (`.answer`), decline (`.reject`) or hang up (`.hangUp`) the doorbell call `callId` of
    /// `devId` (PROTOCOL.md 8.2).
    public func actOnDoorbell(user userId: String, devId: String, callId: String, _ action: LocalAction) throws(CallActionError) {
        let u = try user(userId)
        guard let session = users[u].bell.session else {
            throw .wrongPhase(action: "act on a doorbell call", phase: users[u].bell.phase)
        }
        if session.sessionId != callId { throw .invalidArgument("call '\(callId)' is not the doorbell call on ('\(session.sessionId)')") }
        if !session.peers.contains(devId) { throw .invalidArgument("device '\(devId)' is not the doorbell on") }
        runUser(u, .doorbell, try users[u].bell.perform(action, now: now))
    }

    public func phase(user userId: String) -> CallPhase { userIndex[userId].map { users[$0].call.phase } ?? .idle }

    /// The §3 call's session once the app holds the answer.
    public func answeredSession(user userId: String) -> String? {
        guard let u = userIndex[userId], let s = users[u].call.session, s.phase == .answered else { return nil }
        return s.sessionId
    }

    /// The doorbell call ringing this phone (or being accepted).
    public func ringingDoorbell(user userId: String) -> String? {
        guard let u = userIndex[userId], let s = users[u].bell.session, s.phase != .answered else { return nil }
        return s.sessionId
    }

    /// The accepted doorbell call (the device's `answered` seen) and its device.
    public func answeredDoorbell(user userId: String) -> AnsweredCall? {
        userIndex[userId].flatMap { users[$0].bell.answeredCall }
    }

    /// Offers the P2P link of `sessionId` to `devId` (PROTOCOL.md 4); `auth` overrides the right value.
    public func openVideo(user userId: String, sessionId: String, devId: String, stream: StreamType, auth: String?) throws(CallActionError) {
        let u = try user(userId)
        guard let d = deviceIndex[devId], users[u].devices.contains(d) else {
            throw .invalidArgument("device '\(devId)' is not known to \(userId)")
        }
        users[u].links[sessionId] = d
        let tid = "t\(newToken())"
        users[u].linkTids[sessionId] = tid
        let header = SignalHeader(from: userId, to: devId, sessionId: sessionId, tid: tid)
        let offer = SignalOffer(sdp: "v=0\r\n", streamType: stream, auth: auth ?? devices[d].auth)
        publish(SignalMessage(header: header, body: .offer(offer)).envelope(t: now / 1000), from: .user(u), topic: .deviceIn(d))
    }

    // MARK: Receiving

    func user(_ userId: String) throws(CallActionError) -> Int {
        guard let u = userIndex[userId] else { throw .invalidArgument("no app user '\(userId)'") }
        return u
    }

    func userReceives(_ u: Int, _ bytes: [UInt8]) {
        let userId = users[u].userId
        let inbound: InboundMessage
        switch decode(bytes) {
        case .success(let m): inbound = m
        case .failure(let error):
            events.append(.user(userId, .refused("dropped message: \(error)")))
            return
        }
        switch inbound {
        case .call(let m):
            guard m.targetId == userId else { return }  // another user's message on the device's topic
            events.append(.user(userId, .received(m, devId: m.curId)))
            feedUser(u, .call, .received(m))
        case .doorbellPress(let press):
            events.append(.user(userId, .doorbellPressed(press)))
            feedUser(u, .doorbell, .doorbellPressed(press))
        case .videoDoorbell(let m):
            if m.event == .accept { return }  // an app's accept, not the device's
            events.append(.user(userId, .doorbellReceived(m)))
            feedUser(u, .doorbell, .receivedDoorbell(m))
        case .signal(let s):
            guard s.header.to == userId else { return }
            events.append(.user(userId, .signal(s, devId: s.header.from)))
            // The device closed the link or refused the offer: the app forgets it (as AppUser does),
            // unless the reply names an earlier offer of the session (its `tid`) than the link's.
            let sid = s.header.sessionId
            if !s.header.tid.isEmpty, let tid = users[u].linkTids[sid], tid != s.header.tid { return }
            if case .disconnect = s.body, users[u].links[sid] != nil {
                users[u].links.removeValue(forKey: sid)
                users[u].linkTids.removeValue(forKey: sid)
            }
        case .dpReport(let report):
            guard let d = deviceIndex[report.devId], users[u].devices.contains(d) else { return }
            var values: [DPId: DPValue] = [:]
            for entry in report.dps {
                values[entry.id] = entry.value
                users[u].dpsSeenAt[report.devId, default: [:]][entry.id] = (entry.value, now)
            }
            users[u].dps[report.devId, default: [:]].merge(values) { _, new in new }
            events.append(.user(userId, .dpReport(devId: report.devId, dps: values)))
        case .abilityQuery, .abilityAnswer, .dpSet, .dpQuery, .streamControl:
            break
        }
    }

    /// The engine that holds `session` for user `u` (the §3 call unless it is the doorbell call).
    func slot(of session: String, user u: Int) -> EngineSlot {
        users[u].bell.session?.sessionId == session ? .doorbell : .call
    }

    func feedUser(_ u: Int, _ slot: EngineSlot, _ input: CallInput) {
        let effects = slot == .call ? users[u].call.handle(input, now: now) : users[u].bell.handle(input, now: now)
        runUser(u, slot, effects)
    }

    func runUser(_ u: Int, _ slot: EngineSlot, _ effects: [CallEffect]) {
        let userId = users[u].userId
        for effect in effects {
            switch effect {
            case .send(let m):
                guard let d = deviceIndex[m.targetId] else { continue }
                publish(m.envelope(t: now / 1000), from: .user(u), topic: .deviceIn(d))
                events.append(.user(userId, .sent(m, devId: m.targetId)))
            case .sendDoorbell(let m):
                guard let d = deviceIndex[m.devId] else { continue }
                publish(m.envelope(t: now / 1000), from: .user(u), topic: .deviceIn(d))
                events.append(.user(userId, .doorbellSent(m)))
            case .armTimer(let timer, let at):
                let token = newToken()
                users[u].timers[slot, default: [:]][timer] = token
                schedule(.timer(.user(u), slot, timer, token: token), after: at &- now)
            case .cancelTimer(let timer):
                users[u].timers[slot]?.removeValue(forKey: timer)
            case .startRinging(let session):
                if slot == .call {
                    events.append(.user(userId, .incomingCall(session: session, devId: users[u].call.session?.peers.first ?? "")))
                } else {
                    events.append(.user(userId, .doorbellRinging(devId: users[u].bell.session?.peers.first ?? "", callId: session, atMs: now)))
                }
            case .peerRinging(let session, let peer):
                events.append(.user(userId, .deviceRinging(session: session, devId: peer)))
            case .closeMediaLink(let session):
                // The app closes its link: the device gets `disconnect` (close_reason 0).
                guard let d = users[u].links.removeValue(forKey: session) else { continue }
                let header = SignalHeader(from: userId, to: devices[d].devId, sessionId: session)
                publish(SignalMessage(header: header, body: .disconnect(SignalDisconnect(closeReason: 0))).envelope(t: now / 1000),
                        from: .user(u), topic: .deviceIn(d))
            case .callEnded(let record):
                events.append(.user(userId, .callEnded(record)))
            case .refused(let m, let why):
                if slot == .call { events.append(.user(userId, .refused("refused \(m.event.rawValue) session=\(m.sessionId): \(why)"))) }
            case .stopRinging, .expectMediaLink, .actionRefused, .announcePress, .ringTimedOut, .leaveMessage, .refusedDoorbell:
                break
            }
        }
        // When the app first knew its call was answered (the video's answer -> first frame).
        for s in [users[u].call.session, users[u].bell.session] {
            guard let s, s.phase == .answered, users[u].answeredAt[s.sessionId] == nil else { continue }
            users[u].answeredAt[s.sessionId] = now
        }
    }
}
