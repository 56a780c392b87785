import Camera
import CallEngine
import CallRuntime
import Foundation
import IPCWire
import WebRTCLink

/// A device's P2P links (PROTOCOL.md 4): 302 signalling in, links opened, replaced, reaped and
/// closed, and what each link reports (answer, candidates, up, lost, camera state). The rules
/// (who may open, replace, steer and close a link, the live-view limits, the connect-timeout
/// reaper) are `P2PLinkRules`' (sans-IO); this carries out what they decide, with links from the
/// injected `DeviceLinkFactory` and the reaper on the injected scheduler.
extension Device {
    /// PROTOCOL.md 4: 302 signalling. `P2PLinkRules` decides who may open, replace or close a
    /// link; this carries it out. One case per message type (add new ones here).
    func receiveSignal(_ signal: SignalMessage) {
        let h = signal.header
        // PROTOCOL.md 4: `to` is the devId; a message for someone else is not ours to act on.
        guard h.to == devId else {
            refuse("dropped 302 \(signal.type.rawValue) addressed to '\(h.to)', not to this device", kind: .notForUs)
            return
        }
        log.log(.info, "<- \(signal.type.rawValue)", device: devId, fields: [("session", h.sessionId), ("from", h.from)])
        switch signal.body {
        case .offer(let offer):
            let answered = engine.answeredCall.map { (sessionId: $0.sessionId, peer: $0.peer) }
            // Issue 11: live view never takes from the answered call; past its limits the offer
            // gets `disconnect` (unavailable) and an existing link stays as it was.
            switch linkRules.admitOffer(sessionId: h.sessionId, from: h.from, auth: offer.auth, answeredCall: answered,
                                        nowMs: clock.nowMs(), processHasLiveViewRoom: linkFactory.hasLiveViewRoom) {
            case .refuse(let why, let closeReason) where closeReason == SignalDisconnect.unavailable:
                refuseOffer(h, why: why, what: "live view refused", closeReason: closeReason)
            case .refuse(let why, _):
                refuseOffer(h, why: why)
            case .open(let replacing, let liveView, let generation, let reapAtMs):
                openLink(offer, header: h, replacing: replacing, liveView: liveView, generation: generation, reapAtMs: reapAtMs)
            }
        case .candidate(let candidate):
            guard linkRules.accepts(sessionId: h.sessionId, from: h.from), let link = links[h.sessionId] else { return }
            if !candidate.isEndOfCandidates {
                link.addRemoteCandidate(candidate.wireLine, mLineIndex: candidate.effectiveMLineIndex)
            }
        case .disconnect:
            guard linkRules.receiveDisconnect(sessionId: h.sessionId, from: h.from) else { return }
            closeLink(h.sessionId, notifyPeer: false)
            mediaLink(up: false, sessionId: h.sessionId)
        case .answer:
            break  // the device is the answerer; an answer from an app means nothing here
        case .resolution(let resolution):
            switchStream(resolution, header: h)
        }
    }

    // MARK: P2P links (PROTOCOL.md 4)

    /// Opens (or, for a session that has one, replaces) the link of an authorised offer; the rules
    /// already hold the new link (`generation`), to be reaped at `reapAtMs` unless it comes up.
    private func openLink(_ offer: SignalOffer, header h: SignalHeader, replacing: Bool, liveView: Bool,
                          generation: UInt64, reapAtMs: Int64) {
        if replacing || links[h.sessionId] != nil {
            log.log(.info, "second offer replaces the link", device: devId, fields: [("session", h.sessionId)])
            tearDownLink(h.sessionId, notifyPeer: false)  // the rules hold the new one already
        }
        let link: any DeviceMediaLink
        do {
            link = try linkFactory.makeLink(DeviceLinkRequest(offer: offer, header: h, profile: profile, liveView: liveView,
                                                              nowMs: clock.nowMs()))
            // PROTOCOL.md 8.6: a doorbell's speaker stays off until the app's 312 `speaker` 1.
            if engine.isDoorbell { link.setSpeaker(on: false) }
            try link.start()
        } catch {
            linkRules.closed(sessionId: h.sessionId)
            log.log(.error, "cannot open the P2P link", device: devId, fields: [("session", h.sessionId), ("why", "\(error)")])
            var reply = h.reply()
            reply.from = devId
            publish(SignalMessage(header: reply, body: .disconnect(SignalDisconnect(closeReason: 2))).envelope(t: clock.nowSeconds()),
                    what: "disconnect")
            return
        }
        links[h.sessionId] = link
        noteSessionsChanged()
        noteStreamsChanged()
        // A link that never comes up (no ICE, an app that vanished) is reaped after the profile's
        // connect timeout, so offers cannot pile up pipelines (issues 10 and 11).
        let sessionId = h.sessionId
        let reaper = scheduler.schedule(atMs: reapAtMs, nowMs: clock.nowMs()) { [weak self] in
            await self?.connectTimeoutFired(sessionId: sessionId, generation: generation)
        }
        linkTimers[sessionId] = LinkTimer(generation: generation, reaper: reaper)
        log.log(.info, "P2P link opening", device: devId, fields: [
            ("session", h.sessionId), ("from", h.from), ("stream", offer.streamType == .sub ? "sub" : "main"),
        ])
        linkPumps[h.sessionId] = Task { [weak self] in
            for await signal in link.signals {
                await self?.linkSignalled(signal, link: link)
            }
        }
    }

    private func linkSignalled(_ signal: P2PLinkSignal, link: any DeviceMediaLink) {
        guard links[link.sessionId] === link else { return }  // replaced or closed meanwhile
        var reply = link.offerHeader.reply()
        reply.from = devId
        switch signal {
        case .answer(let sdp):
            publish(SignalMessage(header: reply, body: .answer(SignalAnswer(sdp: sdp))).envelope(t: clock.nowSeconds()),
                    what: "answer")
            log.log(.info, "-> 302 answer", device: devId, fields: [("session", link.sessionId), ("to", reply.to)])
        case .candidate(let line, let index):
            let candidate = IPCWire.ICECandidate(candidate: line, sdpMLineIndex: index)
            publish(SignalMessage(header: reply, body: .candidate(candidate)).envelope(t: clock.nowSeconds()),
                    what: "candidate")
        case .up:
            log.log(.info, "P2P link up", device: devId, fields: [("session", link.sessionId)])
            if let timer = linkTimers[link.sessionId] {
                linkRules.linkUp(sessionId: link.sessionId, generation: timer.generation)
                if let reaper = timer.reaper { scheduler.cancel(reaper) }
                linkTimers[link.sessionId]?.reaper = nil
            }
            mediaLink(up: true, sessionId: link.sessionId)
        case .outputProblem(let why):
            log.log(.warning, "screen or sound output unavailable, the link goes on without it", device: devId,
                    fields: [("session", link.sessionId), ("why", why)])
        case .note(let text):
            log.log(.info, text, device: devId, fields: [("session", link.sessionId)])
        case .camera(let status):
            // Issue 10: a camera unplugged mid-call is reported (the call goes on; video resumes
            // when the capture recovers). Each link on a shared capture reports it: logged and
            // counted once per change.
            let before = camera
            camera.take(status)
            if camera == before { break }
            if case .noVideo(let reason) = status {
                log.log(.warning, "camera lost, the call goes on without video", device: devId,
                        fields: [("session", link.sessionId), ("why", reason)])
            } else {
                log.log(.info, "camera \(status)", device: devId, fields: [("session", link.sessionId)])
            }
        case .lost(let why):
            log.log(.warning, "P2P link lost", device: devId, fields: [("session", link.sessionId), ("why", why)])
            closeLink(link.sessionId, notifyPeer: false)
            mediaLink(up: false, sessionId: link.sessionId)
        }
    }

    /// The connect timeout of link `generation` passed: the rules say whether it is reaped.
    private func connectTimeoutFired(sessionId: String, generation: UInt64) {
        if linkTimers[sessionId]?.generation == generation { linkTimers[sessionId]?.reaper = nil }
        guard let reaped = linkRules.connectTimeoutFired(sessionId: sessionId, generation: generation) else { return }
        log.log(.warning, "P2P link never connected: closed", device: devId, fields: [("session", sessionId)])
        tearDownLink(sessionId, notifyPeer: true)
        if !reaped.liveView { mediaLink(up: false, sessionId: sessionId) }
    }

    /// Forgets a link in the rules and tears it down; with `notifyPeer`, the app gets
    /// `disconnect` (close_reason 0).
    func closeLink(_ sessionId: String, notifyPeer: Bool) {
        linkRules.closed(sessionId: sessionId)
        tearDownLink(sessionId, notifyPeer: notifyPeer)
    }

    /// Tears a link down (its media, pump and reaper), leaving the rules as they are.
    private func tearDownLink(_ sessionId: String, notifyPeer: Bool) {
        if let reaper = linkTimers.removeValue(forKey: sessionId)?.reaper { scheduler.cancel(reaper) }
        guard let link = links.removeValue(forKey: sessionId) else { return }
        noteSessionsChanged()
        noteStreamsChanged()
        linkPumps.removeValue(forKey: sessionId)?.cancel()
        let final = link.stats
        closedMedia.framesSent += final.videoFramesSent
        closedMedia.framesReceived += final.videoFramesReceived
        link.close()
        if notifyPeer, connected {
            var reply = link.offerHeader.reply()
            reply.from = devId
            publish(SignalMessage(header: reply, body: .disconnect(SignalDisconnect(closeReason: 0))).envelope(t: clock.nowSeconds()),
                    what: "disconnect")
        }
        log.log(.info, "P2P link closed", device: devId, fields: [("session", sessionId)])
    }

    /// Whether the session has a P2P link that came up (and is not closed or lost since).
    public func isMediaLinkUp(sessionId: String) -> Bool { linkRules.details[sessionId]?.up == true }

    /// Media counters of the session's link (nil when it has none).
    public func mediaStats(sessionId: String) -> LinkStatistics? { links[sessionId]?.stats }

    /// Media counters of every open link.
    public var mediaLinks: [String: LinkStatistics] { links.mapValues(\.stats) }

    /// The latest frame the app sent on the session's link, as JPEG (proof of a two-way call).
    public func receivedFrameJPEG(sessionId: String) throws -> [UInt8]? {
        guard let link = links[sessionId] else { return nil }
        return try link.snapshotJPEG()
    }

    /// Fault injection: drops every P2P link as if the network failed (the engine then applies
    /// the 5 s rule of PROTOCOL.md 3.3).
    @discardableResult
    public func dropMediaLinks() -> Int {
        let sessions = Array(links.keys)
        for sessionId in sessions {
            log.log(.warning, "fault: dropping the P2P link", device: devId, fields: [("session", sessionId)])
            closeLink(sessionId, notifyPeer: false)
            mediaLink(up: false, sessionId: sessionId)
        }
        return sessions.count
    }

    private func refuseOffer(_ h: SignalHeader, why: String) {
        refuseOffer(h, why: why, what: "unauthorised offer", closeReason: SignalDisconnect.unauthorised)
    }

    /// An offer refused: counted, logged (at the refusal log's limited rate), observed, and the
    /// sender gets `disconnect` with `closeReason` unless PROTOCOL.md 3.4's reply limits drop it;
    /// nothing else changes (PROTOCOL.md 4).
    func refuseOffer(_ h: SignalHeader, why: String, what: String, closeReason: Int64) {
        let (write, suppressed) = refusals.record(.signal, nowMs: clock.nowMs())
        let replying = admitRefusalReply(to: h.from)
        if write {
            var fields = [("session", h.sessionId), ("to", h.from), ("why", why)]
            if suppressed > 0 { fields.append(("suppressed", "\(suppressed) refusal lines since the last one")) }
            log.log(.warning, replying ? "-> disconnect (\(what))" : "\(what), its disconnect dropped (reply limits)",
                    device: devId, fields: fields)
        }
        emit(.offerRefused(sessionId: h.sessionId, from: h.from, why: why))
        guard replying else { return }
        var reply = h.reply()
        reply.from = devId
        let message = SignalMessage(header: reply, body: .disconnect(SignalDisconnect(closeReason: closeReason)))
        publish(message.envelope(t: clock.nowSeconds()), what: "disconnect")
    }
}
