import CallEngine
import IPCWire

/// The app glue, as `AppUser` does it: the out topics of its household's devices decoded and fed to
/// the §3 engine (308 `rtc`) or the doorbell engine (43, `video_doorbell`); the effects carried out
/// (its `call`s and doorbell answers to the device's in topic, a 302 offer once answered), with the
/// invariants checked on each.
extension Simulator {
    func userReceives(_ u: Int, _ packet: SimPacket) {
        guard case .success(let inbound) = packet.message() else {
            report.decodeRefusals += 1
            return
        }
        switch inbound {
        case .call(let message):
            // The out topic carries every target's messages: the engine drops those for others.
            if message.targetId == users[u].userId {
                note("u\(u) <- \(message.event.rawValue) \(message.sessionId) from \(message.curId)")
            }
            feedUser(u, .call, .received(message))
        case .videoDoorbell(let message):
            if message.uid == nil || message.uid == users[u].userId {
                note("u\(u) <- video_doorbell \(message.event.rawValue) \(message.eData)")
            }
            feedUser(u, .doorbell, .receivedDoorbell(message))
        case .doorbellPress(let press):
            note("u\(u) <- 43 \(press.edata) from \(press.devId)")
            feedUser(u, .doorbell, .doorbellPressed(press))
        case .signal(let signal):
            let h = signal.header
            guard h.to == users[u].userId, case .disconnect = signal.body,
                  let i = users[u].links.firstIndex(where: { $0.session == h.sessionId }) else { return }
            let link = users[u].links.remove(at: i)
            note("u\(u) <- disconnect \(h.sessionId)")
            feedUser(u, link.slot, .mediaLinkDown(sessionId: h.sessionId))
        case .abilityQuery, .abilityAnswer, .dpReport, .dpSet, .dpQuery, .streamControl:
            break
        }
    }

    func feedUser(_ u: Int, _ slot: EngineSlot, _ input: CallInput) {
        let t = clock(.user(u))
        let effects = slot == .call ? users[u].call.handle(input, now: t) : users[u].bell.handle(input, now: t)
        runUser(u, slot, effects)
    }

    func runUser(_ u: Int, _ slot: EngineSlot, _ effects: [CallEffect]) {
        hash.add(Int64(effects.count))
        for effect in effects {
            switch effect {
            case .send(let message):
                if message.event == .call, users[u].open(slot) != message.sessionId {
                    openUser(u, slot, message.sessionId, kind: .appCallsDevice)
                }
                guard let d = deviceIndex[message.targetId] else { continue }
                note("u\(u) -> \(message.event.rawValue) \(message.sessionId) to \(message.targetId)\(message.reason.map { " (\($0))" } ?? "")")
                publish(message.envelope(t: clock(.user(u)) / 1000), from: .user(u), topic: .deviceIn(d), session: message.sessionId)
            case .sendDoorbell(let message):
                guard let d = deviceIndex[message.devId] else { continue }
                note("u\(u) -> video_doorbell \(message.event.rawValue) \(message.eData)")
                publish(message.envelope(t: clock(.user(u)) / 1000), from: .user(u), topic: .deviceIn(d), session: message.eData)
            case .armTimer(let timer, let at):
                let token = nextToken
                nextToken &+= 1
                if slot == .call { users[u].callTimers[timer] = token } else { users[u].bellTimers[timer] = token }
                schedule(.timer(.user(u), slot, timer, token: token), after: at &- clock(.user(u)))
            case .cancelTimer(let timer):
                if slot == .call { users[u].callTimers.removeValue(forKey: timer) } else { users[u].bellTimers.removeValue(forKey: timer) }
            case .startRinging(let session):
                if let open = users[u].open(slot) {
                    violation("busy-rings-once", "u\(u) rang for \(session) while in \(open)")
                }
                noteGhost(users[u].userId, session)
                openUser(u, slot, session, kind: slot == .call ? .deviceCallsApps : .doorbell)
                scheduleHumanDecision(.user(u), slot, session: session)
            case .expectMediaLink(let session, let peer):
                // PROTOCOL.md 4: the app offers; the auth is the device's (the household knows it).
                guard let d = deviceIndex[peer] else { continue }
                users[u].links.append((session: session, device: d, slot: slot))
                let header = SignalHeader(from: users[u].userId, to: peer, sessionId: session)
                let offer = SignalOffer(sdp: "v=0\r\n", auth: devices[d].auth)
                note("u\(u) -> offer \(session) to \(peer)")
                publish(SignalMessage(header: header, body: .offer(offer)).envelope(t: clock(.user(u)) / 1000),
                        from: .user(u), topic: .deviceIn(d), session: session)
                // The person hangs up after a while (every answered call ends).
                schedule(.human(.user(u), slot, .hangUp, session: session), after: rng.exponential(meanMs: 40_000))
            case .closeMediaLink(let session):
                guard let i = users[u].links.firstIndex(where: { $0.session == session }) else { continue }
                let link = users[u].links.remove(at: i)
                let header = SignalHeader(from: users[u].userId, to: devices[link.device].devId, sessionId: session)
                publish(SignalMessage(header: header, body: .disconnect(SignalDisconnect(closeReason: 0)))
                    .envelope(t: clock(.user(u)) / 1000), from: .user(u), topic: .deviceIn(link.device), session: session)
            case .callEnded(let record):
                userEnded(u, slot, record)
            case .refused, .refusedDoorbell, .stopRinging, .peerRinging, .actionRefused, .announcePress,
                 .ringTimedOut, .leaveMessage:
                break
            }
        }
    }

    private func openUser(_ u: Int, _ slot: EngineSlot, _ session: String, kind: CallKind) {
        users[u].setOpen(slot, session)
        ledger.open(session, kind: kind)
    }

    private func userEnded(_ u: Int, _ slot: EngineSlot, _ record: CallRecord) {
        let s = record.sessionId
        endedSessionHashes.insert(StableHash.of(users[u].userId + "/" + s))
        note("u\(u) ended \(s) \(OutcomeRules.describe(record))")
        if users[u].open(slot) == s {
            users[u].setOpen(slot, nil)
        } else {
            violation("ends-once", "u\(u) ended \(s) while its open session is \(users[u].open(slot) ?? "none")")
        }
        for problem in ledger.ended(record) { violation(problem.rule, problem.detail) }
        let armed = slot == .call ? users[u].call.armedTimers : users[u].bell.armedTimers
        if armed.contains(where: { $0.timer.sessionId == s }) {
            violation("no-orphans", "u\(u) keeps a timer of \(s) after it ended")
        }
        let glue = slot == .call ? users[u].callTimers : users[u].bellTimers
        if glue.keys.contains(where: { $0.sessionId == s }) {
            violation("no-orphans", "u\(u) glue keeps a timer of \(s) after it ended")
        }
        if users[u].links.contains(where: { $0.session == s }) {
            violation("no-orphans", "u\(u) keeps the link of \(s) after it ended")
        }
    }
}
