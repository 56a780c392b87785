import CallEngine
import CallRuntime
import Foundation
import IPCWire

/// The app side of a doorbell call (PROTOCOL.md 8.1, 8.2), as the SDK shows it: a 43 from a
/// device this app reads rings the phone (`AppEvent.doorbellRinging`); the user accepts, declines
/// or hangs up; the device's `answered`, `timeout`, `cancel` and `stop` end or carry on the call,
/// each ending a `CallRecord` with its SDK error code (-2522 answered by others, -2530 timeout,
/// -2523 cancelled, -2513 the device hung up). The rules are `AppDoorbellEngine`'s (CallEngine);
/// this file feeds it and carries out its effects, beside the §3 engine of `AppUser.swift`.
extension AppUser {
    /// The doorbell engine's settings from the §3 engine's: the same user, heartbeat timers and
    /// answer policy (an app that auto-answers calls accepts doorbells too; `.busy` declines).
    static func doorbellConfig(_ config: AppEngineConfig) -> AppDoorbellConfig {
        AppDoorbellConfig(userId: config.userId, heartbeatIntervalMs: config.heartbeatIntervalMs,
                          heartbeatTimeoutMs: config.heartbeatTimeoutMs, policy: config.incomingPolicy)
    }

    // MARK: Settings

    /// Replaces the doorbell settings (household filter, heartbeat timers, the device's ring
    /// timeout the app waits for, the answer policy). Refused while a doorbell call is on.
    public func configureDoorbells(_ config: AppDoorbellConfig) throws(CallActionError) {
        if let current = doorbellHost.engine.session { throw .onCalling(sessionId: current.sessionId) }
        guard config.userId == userId else { throw .invalidArgument("the doorbell config is for '\(config.userId)', not '\(userId)'") }
        doorbellHost.cancelAllTimers()
        doorbellHost = EngineHost(engine: AppDoorbellEngine(config: config), clock: clock, scheduler: doorbellSide.scheduler)
    }

    /// The doorbell settings in force.
    public var doorbellConfig: AppDoorbellConfig { doorbellHost.engine.config }

    /// What the app does when a doorbell rings: `.answerAfter(ms:)` accepts, `.reject`,
    /// `.rejectAfter(ms:)` and `.busy` decline (`stop`), `.ignore` lets it ring, `.manual` waits
    /// for ``acceptDoorbell(devId:callId:)`` and friends.
    public func setDoorbellPolicy(_ policy: AnswerPolicy) throws(CallActionError) {
        try performDoorbell(.setAnswerPolicy(policy))
    }

    // MARK: The user's actions (PROTOCOL.md 8.2)

    /// `accept`: answers the doorbell call that rings. The call is this user's once the device's
    /// `answered` names it; then heartbeats go every `heartbeatInterval` and
    /// ``openDoorbellVideo(streamType:saveFramesTo:decodes:)`` opens the §4 link (`sessionid` =
    /// the call id). `devId`/`callId`, when given, must name the call that rings.
    public func acceptDoorbell(devId: String? = nil, callId: String? = nil) throws(CallActionError) {
        try checkCurrentDoorbell(devId: devId, callId: callId)
        try performDoorbell(.answer)
    }

    /// `stop` before an accept: this user declines; the call rings on for the others.
    public func declineDoorbell(devId: String? = nil, callId: String? = nil) throws(CallActionError) {
        try checkCurrentDoorbell(devId: devId, callId: callId)
        try performDoorbell(.reject)
    }

    /// `stop`: hangs up the accepted doorbell call (before the accept it declines, as
    /// ``declineDoorbell(devId:callId:)``).
    public func hangUpDoorbell(devId: String? = nil, callId: String? = nil) throws(CallActionError) {
        try checkCurrentDoorbell(devId: devId, callId: callId)
        try performDoorbell(.hangUp)
    }

    /// The doorbell call now (an incoming call of type 3 from the device), if any.
    public var doorbellSession: CallSessionSnapshot? { doorbellHost.engine.session }
    /// The doorbell call's phase: idle, ringingIncoming (ringing or accepting), answered.
    public var doorbellPhase: CallPhase { doorbellHost.engine.phase }
    /// The accepted doorbell call (this user's, the device's `answered` seen) and its device.
    public var answeredDoorbell: AnsweredCall? { doorbellHost.engine.answeredCall }

    /// PROTOCOL.md 8.2, 4: opens the P2P link of the accepted doorbell call (`sessionid` = the call
    /// id, to the device that rang); returns the session id. Video statistics as for a §3 call
    /// (``videoStats(sessionId:)``).
    @discardableResult
    public func openDoorbellVideo(streamType: StreamType = .main, saveFramesTo: String? = nil,
                                  decodes: Bool = true) throws(AppError) -> String {
        guard let call = doorbellHost.engine.answeredCall else { throw .mqtt("no accepted doorbell call to open video for") }
        return try openVideo(streamType: streamType, saveFramesTo: saveFramesTo, sessionId: call.sessionId,
                             devId: call.peer, decodes: decodes)
    }

    private func checkCurrentDoorbell(devId: String?, callId: String?) throws(CallActionError) {
        guard devId != nil || callId != nil else { return }
        guard let session = doorbellHost.engine.session else {
            throw .wrongPhase(action: "act on a doorbell call", phase: doorbellHost.engine.phase)
        }
        if let callId, callId != session.sessionId {
            throw .invalidArgument("call '\(callId)' is not the doorbell call on ('\(session.sessionId)')")
        }
        if let devId, !session.peers.contains(devId) {
            throw .invalidArgument("device '\(devId)' is not the doorbell on ('\(session.peers.first ?? "")')")
        }
    }

    private func performDoorbell(_ action: LocalAction) throws(CallActionError) {
        runDoorbell(try doorbellHost.perform(action, fire: doorbellTimerFire))
    }

    // MARK: Receiving (PROTOCOL.md 8)

    /// A section 8 message on a device's out topic (`AppUser.receive` hands these over).
    func receiveDoorbellSide(_ inbound: InboundMessage, devId: String) {
        switch inbound {
        case .doorbellPress(let press):
            guard press.devId == devId else {
                refuseDoorbellSide("43 on \(devId)'s topic names device '\(press.devId)'")
                return
            }
            emit(.doorbellPressed(press))
            feedDoorbell(.doorbellPressed(press))
        case .videoDoorbell(let m):
            guard m.devId == devId else {
                refuseDoorbellSide("video_doorbell on \(devId)'s topic names device '\(m.devId)'")
                return
            }
            // An app's `accept` is not the device's (apps publish on the in topic; a test may not).
            if m.event == .accept { return }
            emit(.doorbellReceived(m))
            feedDoorbell(.receivedDoorbell(m))
        case .dpReport(let report):
            receiveDPReport(report, devId: devId)
        case .streamControl(let m):
            receiveStreamControl(m, devId: devId)
        case .call, .signal, .abilityQuery, .abilityAnswer, .dpSet, .dpQuery:
            break
        }
    }

    func refuseDoorbellSide(_ why: String) {
        let line = "dropped: \(why)"
        log.log(.warning, line, device: userId)
        emit(.refused(why: line))
    }

    // MARK: Effects

    /// Feeds one input to the doorbell engine (through its host, which keeps the timers).
    func feedDoorbell(_ input: CallInput) { runDoorbell(doorbellHost.handle(input, fire: doorbellTimerFire)) }

    /// What a due doorbell timer calls: back onto this actor.
    nonisolated var doorbellTimerFire: @Sendable (CallTimer) async -> Void {
        { [weak self] timer in await self?.feedDoorbell(.timerFired(timer)) }
    }

    func runDoorbell(_ effects: [CallEffect]) {
        for effect in effects {
            switch effect {
            case .sendDoorbell(let m):
                log.log(.info, "-> video_doorbell \(m.event.rawValue)", device: userId,
                        fields: [("devId", m.devId), ("call", m.eData)] + (m.reason.map { [("reason", $0)] } ?? []))
                do {
                    try publish(m.envelope(t: clock.nowSeconds()), to: m.devId)
                    emit(.doorbellSent(m))
                } catch {
                    log.log(.error, "could not send video_doorbell \(m.event.rawValue): \(error)", device: userId)
                }
            case .startRinging(let callId):
                emit(.doorbellRinging(devId: doorbellHost.engine.session?.peers.first ?? "", callId: callId,
                                      atMs: clock.nowMs()))
            case .expectMediaLink(let sessionId, _):
                answeredAt[sessionId] = clockDate()
            case .closeMediaLink(let sessionId):
                closeVideo(sessionId: sessionId)
            case .callEnded(let record):
                ended.append(record)
                emit(.callEnded(record))
            case .refusedDoorbell(let m, let why):
                // Other users' heartbeats and stops travel on the same topic: not ours, not news.
                log.log(.debug, "ignored video_doorbell \(m.event.rawValue) call=\(m.eData): \(why)", device: userId)
            case .refused(let m, let why):
                log.log(.debug, "ignored \(m.event.rawValue): \(why)", device: userId)
            case .armTimer, .cancelTimer, .stopRinging, .actionRefused, .send, .peerRinging,
                 .announcePress, .ringTimedOut, .leaveMessage:
                break
            }
        }
    }
}
