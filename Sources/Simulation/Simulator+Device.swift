import CallEngine
import IPCWire

/// The device glue, as `Device` does it: the in topic's messages decoded and fed to the engine,
/// replies to refused messages limited (PROTOCOL.md 3.4), 302 offers judged by `P2PLinkRules`,
/// and the engine's effects carried out, with the invariants checked on each.
extension Simulator {
    func deviceReceives(_ d: Int, _ packet: SimPacket) {
        let inbound: InboundMessage
        switch packet.message() {
        case .success(let message): inbound = message
        case .failure:
            report.decodeRefusals += 1
            note("d\(d) refused \(packet.bytes.count) bytes from \(packet.from) (decode)")
            return
        }
        switch inbound {
        case .call(let message):
            note("d\(d) <- \(message.event.rawValue) \(message.sessionId) from \(message.curId)")
            feedDevice(d, .received(message), limited: true)
        case .videoDoorbell(let message):
            note("d\(d) <- video_doorbell \(message.event.rawValue) \(message.eData) from \(message.uid ?? "")")
            feedDevice(d, .receivedDoorbell(message), limited: true)
        case .signal(let signal):
            deviceSignal(d, signal)
        case .abilityQuery, .abilityAnswer, .doorbellPress, .dpReport, .dpSet, .dpQuery, .streamControl:
            report.engineRefusals += 1
        }
    }

    /// Feeds one input to device `d`'s engine and carries out the effects. `limited`: the input is
    /// a received message, whose refusal replies go through the device's limiter.
    func feedDevice(_ d: Int, _ input: CallInput, limited: Bool = false) {
        var effects = devices[d].engine.handle(input, now: clock(.device(d)))
        if limited {
            let (kept, dropped) = devices[d].limiter.limitReplies(in: effects, now: clock(.device(d)))
            if !dropped.isEmpty {
                report.refusalRepliesDropped += dropped.count
                effects = kept
                // A reply the limiter held back is a fault on that call (it may be a genuine one).
                for effect in effects {
                    if case .refused(let m, _) = effect { ledger.markFaulted(m.sessionId) }
                    if case .refusedDoorbell(let m, _) = effect { ledger.markFaulted(m.eData) }
                }
            }
        }
        runDevice(d, effects)
    }

    func runDevice(_ d: Int, _ effects: [CallEffect]) {
        hash.add(Int64(effects.count))
        let devId = devices[d].devId
        var refusedReply = false
        for effect in effects {
            switch effect {
            case .send(let message):
                if message.event == .call, message.curId == devId, devices[d].open != message.sessionId {
                    openDevice(d, message.sessionId, kind: .deviceCallsApps)
                }
                if refusedReply { report.refusalRepliesSent += 1 }
                note("d\(d) -> \(message.event.rawValue) \(message.sessionId) to \(message.targetId)\(message.reason.map { " (\($0))" } ?? "")")
                publish(message.envelope(t: clock(.device(d)) / 1000), from: .device(d), topic: .deviceOut(d),
                        session: message.sessionId)
            case .sendDoorbell(let message):
                if refusedReply { report.refusalRepliesSent += 1 }
                note("d\(d) -> video_doorbell \(message.event.rawValue) \(message.eData) \(message.uid ?? "*")")
                publish(message.envelope(t: clock(.device(d)) / 1000), from: .device(d), topic: .deviceOut(d),
                        session: message.eData)
            case .armTimer(let timer, let at):
                let token = nextToken
                nextToken &+= 1
                devices[d].timers[timer] = token
                schedule(.timer(.device(d), .call, timer, token: token), after: at &- clock(.device(d)))
            case .cancelTimer(let timer):
                devices[d].timers.removeValue(forKey: timer)
            case .startRinging(let session):
                // PROTOCOL.md 3.1.2: a busy device answers `busy` and nothing else changes.
                if let open = devices[d].open {
                    violation("busy-rings-once", "d\(d) rang for \(session) while in \(open)")
                }
                noteGhost(devId, session)
                openDevice(d, session, kind: .appCallsDevice)
                if devices[d].manual { scheduleHumanDecision(.device(d), .call, session: session) }
            case .announcePress(let callId):
                // PROTOCOL.md 8.1: no second 43 while a doorbell call is on.
                if let open = devices[d].open {
                    violation("busy-rings-once", "d\(d) announced \(callId) while in \(open)")
                }
                openDevice(d, callId, kind: .doorbell)
                let press = DoorbellPressMessage(devId: devId, etype: devices[d].kind.rawValue, edata: callId)
                note("d\(d) -> 43 \(callId)")
                publish(press.envelope(t: clock(.device(d)) / 1000), from: .device(d), topic: .deviceOut(d), session: callId)
            case .expectMediaLink(let session, _):
                // The operator hangs up now and then (the app usually does).
                if rng.chance(0.3) {
                    schedule(.human(.device(d), .call, .hangUp, session: session), after: rng.exponential(meanMs: 45_000))
                }
            case .closeMediaLink(let session):
                closeDeviceLink(d, session, notifyPeer: true)
            case .callEnded(let record):
                deviceEnded(d, record)
            case .refused, .refusedDoorbell:
                report.engineRefusals += 1
                refusedReply = true
            case .stopRinging, .peerRinging, .actionRefused, .ringTimedOut, .leaveMessage:
                break
            }
        }
    }

    /// A ring for a session this side has already ended (PROTOCOL.md 3.1.2 covers only a repeated
    /// call for the session a side still has).
    func noteGhost(_ side: String, _ session: String) {
        guard endedSessionHashes.contains(StableHash.of(side + "/" + session)) else { return }
        report.ghostRings += 1
        note("\(side) rings again for \(session), which it has ended (a duplicate or late message)")
    }

    private func openDevice(_ d: Int, _ session: String, kind: CallKind) {
        devices[d].open = session
        ledger.open(session, kind: kind)
    }

    private func deviceEnded(_ d: Int, _ record: CallRecord) {
        let s = record.sessionId
        endedSessionHashes.insert(StableHash.of(devices[d].devId + "/" + s))
        note("d\(d) ended \(s) \(OutcomeRules.describe(record))")
        if devices[d].open == s {
            devices[d].open = nil
        } else {
            violation("ends-once", "d\(d) ended \(s) while its open session is \(devices[d].open ?? "none")")
        }
        for problem in ledger.ended(record) { violation(problem.rule, problem.detail) }
        // No session or timer outlives its call.
        if devices[d].engine.armedTimers.contains(where: { $0.timer.sessionId == s }) {
            violation("no-orphans", "d\(d) keeps a timer of \(s) after it ended")
        }
        if devices[d].timers.keys.contains(where: { $0.sessionId == s }) {
            violation("no-orphans", "d\(d) glue keeps a timer of \(s) after it ended")
        }
        if devices[d].links.contains(where: { $0.session == s }) {
            violation("no-orphans", "d\(d) keeps the link of \(s) after it ended")
        }
    }

    /// A due timer: fed unless it was cancelled or re-armed meanwhile (the host forgets those).
    func fireTimer(_ node: NodeRef, _ slot: EngineSlot, _ timer: CallTimer, token: UInt64) {
        switch node {
        case .device(let d):
            guard devices[d].timers[timer] == token else { return }
            devices[d].timers.removeValue(forKey: timer)
            note("d\(d) timer \(timer)")
            feedDevice(d, .timerFired(timer))
        case .user(let u):
            let armed = slot == .call ? users[u].callTimers[timer] : users[u].bellTimers[timer]
            guard armed == token else { return }
            if slot == .call { users[u].callTimers.removeValue(forKey: timer) } else { users[u].bellTimers.removeValue(forKey: timer) }
            note("u\(u) timer \(timer)")
            feedUser(u, slot, .timerFired(timer))
        case .hostile:
            break
        }
    }

    // MARK: P2P links, device side (PROTOCOL.md 4)

    private func deviceSignal(_ d: Int, _ signal: SignalMessage) {
        let h = signal.header
        guard h.to == devices[d].devId else {
            report.engineRefusals += 1
            return
        }
        switch signal.body {
        case .offer(let offer):
            let answered = devices[d].engine.answeredCall.map { (sessionId: $0.sessionId, peer: $0.peer) }
            switch devices[d].linkRules.receiveOffer(sessionId: h.sessionId, from: h.from, auth: offer.auth, answeredCall: answered) {
            case .refuse(let why):
                report.offersRefused += 1
                note("d\(d) refused offer \(h.sessionId) from \(h.from): \(why)")
                var reply = h.reply()
                reply.from = devices[d].devId
                publish(SignalMessage(header: reply, body: .disconnect(SignalDisconnect(closeReason: SignalDisconnect.unauthorised)))
                    .envelope(t: clock(.device(d)) / 1000), from: .device(d), topic: .deviceOut(d), session: "")
            case .open(let replacing):
                if replacing { closeDeviceLink(d, h.sessionId, notifyPeer: false, keepRules: true) }
                openDeviceLink(d, session: h.sessionId, peer: h.from)
            }
        case .disconnect:
            guard devices[d].linkRules.receiveDisconnect(sessionId: h.sessionId, from: h.from) else { return }
            closeDeviceLink(d, h.sessionId, notifyPeer: false)
            feedDevice(d, .mediaLinkDown(sessionId: h.sessionId))
        case .candidate, .answer, .resolution:
            break
        }
    }

    private func openDeviceLink(_ d: Int, session: String, peer: String) {
        // A link only for the user who answered (liveView is off in the simulation).
        let answered = devices[d].engine.answeredCall
        if answered?.sessionId != session || answered?.peer != peer {
            violation("link-owner", "d\(d) opened a link of \(session) for \(peer); answered: \(answered.map { "\($0.sessionId) by \($0.peer)" } ?? "none")")
        }
        guard let user = userIndex[peer] else { return }
        let generation = nextGeneration
        nextGeneration &+= 1
        devices[d].links.append(SimLinkState(session: session, peer: peer, user: user, generation: generation))
        report.linksOpened += 1
        note("d\(d) link \(session) opening for \(peer)")
        if rng.chance(Rates.linkFailChance) {
            // ICE never completes: the device's connectTimeout decides (PROTOCOL.md 3.3).
            report.faults.linkFailures += 1
            ledger.markFaulted(session)
        } else {
            schedule(.linkUp(device: d, session: session, generation: generation), after: rng.exponential(meanMs: 400))
        }
    }

    /// Tears a device's link down; with `notifyPeer` the app gets `disconnect` (close_reason 0).
    func closeDeviceLink(_ d: Int, _ session: String, notifyPeer: Bool, keepRules: Bool = false) {
        if !keepRules { devices[d].linkRules.closed(sessionId: session) }
        guard let i = devices[d].links.firstIndex(where: { $0.session == session }) else { return }
        let link = devices[d].links.remove(at: i)
        if notifyPeer {
            let header = SignalHeader(from: devices[d].devId, to: link.peer, sessionId: session)
            publish(SignalMessage(header: header, body: .disconnect(SignalDisconnect(closeReason: 0)))
                .envelope(t: clock(.device(d)) / 1000), from: .device(d), topic: .deviceOut(d), session: session)
        }
    }
}
