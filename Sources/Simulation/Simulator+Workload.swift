import CallEngine
import IPCWire

/// The workload drawn from the seed: calls (an app's `startCall`, a screen_ipc press calling the
/// household with call type 1, 2 or 3, a doorbell press), the people who answer, reject, say busy,
/// let it ring, cancel and hang up, and the hostile senders' floods.
extension Simulator {
    func scheduleWorkload() {
        schedule(.startCall, after: 0)
        for h in 0..<config.hostileSenders {
            schedule(.hostile(h), after: rng.exponential(meanMs: Double(Rates.hostileBurstGapMs)))
        }
        scheduleFaults()
    }

    func startNextCall() {
        guard !workloadDone else { return }
        guard report.callsStarted < config.calls else {
            workloadDone = true
            return
        }
        defer {
            if report.callsStarted >= config.calls || report.startsRefused > 4 * max(1, config.calls) {
                workloadDone = true
            } else {
                schedule(.startCall, after: rng.exponential(meanMs: Rates.meanCallGapPerDeviceMs / Double(config.devices)))
            }
        }
        let d = rng.below(devices.count)
        let device = devices[d]
        let isBell = device.kind != .screenIPC
        let appCalls = isBell ? rng.chance(0.05) : rng.chance(0.6)
        if appCalls, let u = rng.pick(device.household) {
            users[u].sessionCounter += 1
            let session = "\(users[u].userId)-\(users[u].sessionCounter)"
            let start = StartCall(targetId: device.devId, sessionId: session, timeoutSeconds: 30)
            let effects = users[u].call.handle(.local(.startCall(start)), now: clock(.user(u)))
            note("u\(u) startCall \(session) to d\(d)")
            runUser(u, .call, effects)
            countStart(effects, caller: .user(u), slot: .call, session: session)
            return
        }
        let session: String
        var callType: CallType?
        if isBell {
            session = uniqueSession { makeDoorbellCallId(unixSeconds: clock(.device(d)) / 1000, using: &rng) }
        } else {
            session = uniqueSession { makeSessionId(devId: device.devId, using: &rng) }
            callType = [CallType.oneToOne, .oneToMore, .oneToMoreSpecial][rng.below(3)]
        }
        let effects = devices[d].engine.handle(.local(.press(DoorbellPress(sessionId: session, callType: callType))),
                                               now: clock(.device(d)))
        note("d\(d) press \(session)")
        runDevice(d, effects)
        countStart(effects, caller: .device(d), slot: .call, session: session)
    }

    private func countStart(_ effects: [CallEffect], caller: NodeRef, slot: EngineSlot, session: String) {
        let started = effects.contains {
            switch $0 {
            case .send(let m): m.event == .call
            case .announcePress: true
            default: false
            }
        }
        // A press in the message window (PROTOCOL.md 8.5) leaves a message: no call, no session.
        if !started, effects.contains(where: { if case .leaveMessage = $0 { true } else { false } }) {
            report.messagesLeft += 1
            return
        }
        guard started else {
            report.startsRefused += 1
            return
        }
        report.callsStarted += 1
        // Now and then the caller gives up before an answer.
        if rng.chance(0.1) {
            schedule(.human(caller, slot, .cancel, session: session), after: rng.exponential(meanMs: 6000))
        }
    }

    /// A session id not used before in this run (a 6-character suffix can repeat over a million calls).
    private func uniqueSession(_ make: () -> String) -> String {
        while true {
            let id = make()
            if usedSessionHashes.insert(StableHash.of(id)).inserted { return id }
        }
    }

    /// The person at a ringing phone or bell decides, after a moment.
    func scheduleHumanDecision(_ node: NodeRef, _ slot: EngineSlot, session: String) {
        let roll = rng.below(100)
        let action: HumanAction
        switch roll {
        case ..<50: action = .answer
        case ..<65: action = .reject
        case ..<70: action = .busy
        default: return  // lets it ring
        }
        schedule(.human(node, slot, action, session: session), after: rng.exponential(meanMs: 3000))
    }

    func humanActs(_ node: NodeRef, _ slot: EngineSlot, _ action: HumanAction, session: String) {
        let local: LocalAction = switch action {
        case .answer: .answer
        case .reject: .reject
        case .busy: .busy
        case .cancel: .cancel
        case .hangUp: .hangUp
        }
        switch node {
        case .device(let d):
            guard devices[d].open == session else { return }  // that call is over
            note("d\(d) human \(action.rawValue) \(session)")
            feedDevice(d, .local(local))
        case .user(let u):
            guard users[u].open(slot) == session else { return }
            note("u\(u) human \(action.rawValue) \(session)")
            feedUser(u, slot, .local(local))
        case .hostile:
            break
        }
    }

    // MARK: Hostile senders (PROTOCOL.md 3.4: refused, and the replies limited)

    func hostileBurst(_ h: Int) {
        guard !workloadDone else { return }
        defer { schedule(.hostile(h), after: rng.exponential(meanMs: Double(Rates.hostileBurstGapMs))) }
        let d = rng.below(devices.count)
        let devId = devices[d].devId
        let sender = "evil\(h)"
        let t = clock(.hostile(h)) / 1000
        for _ in 0..<Rates.hostileBurst {
            report.hostileMessages += 1
            let roll = rng.below(100)
            let bytes: [UInt8]
            switch roll {
            case ..<25:
                bytes = Array(#"{"protocol":308,"t":1,"data":{"type":"rtc","data":{"event":"#.utf8)
            case ..<55:
                // An event for a session the device does not have, or (its current one) from a stranger.
                let session = devices[d].open ?? "nosuch\(rng.below(1000))"
                bytes = CallMessage(event: .hangUp, curId: sender, targetId: devId, sessionId: session)
                    .envelope(t: t).encoded()
            case ..<70:
                var extra = CallExtra()
                extra.bizType = "not_screen_ipc"
                bytes = CallMessage(event: .call, curId: sender, targetId: devId, sessionId: "evil\(rng.below(1_000_000))",
                                    timeout: clock(.hostile(h)) + 30_000, extra: extra).envelope(t: t).encoded()
            case ..<85:
                let callId = devices[d].open ?? "00000000"
                bytes = VideoDoorbellMessage(devId: devId, uid: sender, event: .accept, eData: callId).envelope(t: t).encoded()
            default:
                // An offer: a wrong auth, or the right one from a household user who did not answer.
                let session = devices[d].open ?? "nosuch"
                let from = rng.chance(0.5) ? sender : (rng.pick(devices[d].household).map { "u\($0)" } ?? sender)
                let answerer = devices[d].engine.answeredCall?.peer
                let auth = rng.chance(0.5) || from == answerer ? "d3Jvbmc=" : devices[d].auth
                let header = SignalHeader(from: from, to: devId, sessionId: session)
                bytes = SignalMessage(header: header, body: .offer(SignalOffer(sdp: "v=0\r\n", auth: auth)))
                    .envelope(t: t).encoded()
            }
            publish(bytes: bytes, from: .hostile(h), topic: .deviceIn(d), session: "", hostile: true)
        }
    }
}
