import CallEngine
import CallRuntime
import IPCWire

/// Carrying out the engine's effects: sends (sealed per the profile's security mode, held back by
/// the reply-delay fault on the injected scheduler), ringing, links, records.
extension Device {
    /// Feeds one input to the engine (through the host, which keeps the timers).
    func feed(_ input: CallInput) { run(host.handle(input, fire: timerFire)) }

    /// What a due timer calls: back onto this actor.
    nonisolated var timerFire: @Sendable (CallTimer) async -> Void {
        { [weak self] timer in await self?.feed(.timerFired(timer)) }
    }

    func run(_ effects: [CallEffect], quiet: Bool = false) {
        defer { if !effects.isEmpty { noteSessionsChanged() } }
        for effect in effects {
            switch effect {
            case .send(let message):
                if message.event == .heartbeat, faults.heartbeatRepliesSuppressed {
                    log.log(.info, "fault: heartbeat reply suppressed", device: devId, fields: [("session", message.sessionId)])
                    continue
                }
                log.callEvent(.outbound, message, device: devId, level: quiet ? .debug : .info)
                publish(message.envelope(t: clock.nowSeconds()), what: message.event.rawValue)
                emit(.sent(message))
            case .armTimer, .cancelTimer:
                break  // the host keeps the timers
            case .startRinging(let sessionId):
                log.log(.info, "ringing", device: devId, fields: [("session", sessionId)])
                linkFactory.prepareWhileRinging(profile: profile, devId: devId, sessionId: sessionId)
                emit(.ringing(sessionId: sessionId))
            case .stopRinging(let sessionId):
                emit(.ringingStopped(sessionId: sessionId))
            case .peerRinging(let sessionId, let peer):
                log.log(.info, "app is ringing", device: devId, fields: [("session", sessionId), ("user", peer)])
            case .expectMediaLink(let sessionId, let peer):
                log.log(.debug, "expecting P2P offer", device: devId, fields: [("session", sessionId), ("from", peer)])
            case .closeMediaLink(let sessionId):
                closeLink(sessionId, notifyPeer: true)
            case .callEnded(let record):
                callsEnded += 1
                lastCall = record
                linkFactory.callEnded(devId: devId, sessionId: record.sessionId)
                var fields = [("session", record.sessionId), ("outcome", record.outcome.rawValue),
                              ("peers", record.peers.joined(separator: ","))]
                if let reason = record.reason { fields.append(("reason", reason.rawValue)) }
                log.log(.info, "call ended", device: devId, fields: fields)
                emit(.callEnded(record))
            case .refused(let message, let why):
                refuse("refused \(message.event.rawValue) session=\(message.sessionId) from=\(message.curId): \(why)", kind: .call)
            case .actionRefused(let action, let error):
                log.log(.warning, "operator action refused", device: devId, fields: [("action", "\(action)"), ("why", "\(error)")])
            case .refusedDoorbell(let message, let why):
                refuse("refused video_doorbell \(message.event.rawValue) call=\(message.eData) from=\(message.uid ?? ""): \(why)", kind: .call)
            case .sendDoorbell(let message):
                log.log(quiet ? .debug : .info, "-> video_doorbell \(message.event.rawValue)", device: devId,
                        fields: [("call", message.eData), ("user", message.uid ?? "")] + (message.reason.map { [("reason", $0)] } ?? []))
                publish(message.envelope(t: clock.nowSeconds()), what: "video_doorbell \(message.event.rawValue)")
                emit(.sentDoorbell(message))
            case .announcePress(let callId):
                announcePress(callId: callId)
            case .ringTimedOut(let callId):
                reportRingTimeout(callId: callId)
            case .leaveMessage(let callId):
                leaveMessage(callId: callId)
            }
        }
    }

    func publish(_ envelope: Envelope, what: String) {
        let payload: [UInt8]
        do {
            payload = try sealer.seal(envelope)
        } catch {
            log.log(.error, "could not seal \(what)", device: devId, fields: [("why", "\(error)")])
            return
        }
        guard faults.replyDelayMs > 0 else {
            send(payload, what: what)
            return
        }
        // Each reply goes out `replyDelayMs` late, on the injected scheduler; they keep their
        // order (a reply is never due before the one before it, and each timer sends every reply
        // due by its own deadline, whichever timer's hop comes first).
        let now = clock.nowMs()
        let (late, overflow) = now.addingReportingOverflow(min(max(0, faults.replyDelayMs), 86_400_000))
        let due = max(overflow ? .max : late, delayedOutbox.last?.dueMs ?? .min)
        delayedOutbox.append((dueMs: due, payload: payload, what: what))
        scheduler.schedule(atMs: due, nowMs: now) { [weak self] in await self?.sendDelayed(through: due) }
    }

    private func sendDelayed(through dueMs: Int64) {
        while let first = delayedOutbox.first, first.dueMs <= dueMs {
            delayedOutbox.removeFirst()
            send(first.payload, what: first.what)
        }
    }

    private func send(_ payload: [UInt8], what: String) {
        do {
            try client.publish(topic: outTopic, payload: payload, qos: 1, retain: false)
        } catch {
            log.log(.error, "could not publish \(what)", device: devId, fields: [("why", "\(error)")])
        }
    }
}
