import CallEngine
import CallRuntime
import Foundation
import IPCWire
import WebRTCLink

/// Video (PROTOCOL.md 4: the app offers, the device answers): the app's P2P links, from the
/// injected `AppLinkFactory`, and the 302 signalling that drives them; `P2PLinkRules` (app role)
/// decides whose replies count.
extension AppUser {
    /// Opens the P2P link of the answered call: offers to receive the device's video (stream
    /// `streamType`), optionally sending `sendVideo` (two-way). Returns the session id.
    /// `sessionId` and `auth` override what is sent (to test the device's refusals). `ice`: the
    /// STUN/TURN servers the offer's `token` names and this link uses, and relay-only ICE
    /// (PROTOCOL.md 4, 9.4).
    @discardableResult
    public func openVideo(streamType: StreamType = .main, sendVideo: VideoFormat? = nil, saveFramesTo: String? = nil,
                          sessionId: String? = nil, devId: String? = nil, auth: String? = nil,
                          decodes: Bool = true, hevc: Bool = false,
                          ice: AppICEConfiguration = AppICEConfiguration()) throws(AppError) -> String {
        guard let sid = sessionId ?? engine.answeredCall?.sessionId else { throw .mqtt("no answered call to open video for") }
        guard let target = devId ?? engine.answeredCall?.peer ?? engine.session?.peers.first else { throw .unknownDevice("?") }
        guard let channel = devices[target] else { throw .unknownDevice(target) }
        closeVideo(sessionId: sid)
        disconnects[sid] = nil
        // A link prepared while the call rang (AppUser+PreparedVideo.swift) only sends its offer.
        let shape = VideoLinkShape(devId: target, sendVideo: sendVideo, saveFramesTo: saveFramesTo, decodes: decodes,
                                   hevc: hevc, ice: ice)
        let prepared = takePreparedVideo(sessionId: sid, shape: shape)
        prepared?.callAnswered(at: answeredAt[sid])
        let link = prepared ?? linkFactory.makeLink(AppLinkRequest(
            sessionId: sid, devId: target, sendVideo: sendVideo, answeredAt: answeredAt[sid], saveFramesTo: saveFramesTo,
            decodes: decodes, hevc: hevc, ice: ice))
        videoLinks[sid] = link
        linkRules.opened(sessionId: sid, peer: target)
        let authValue = auth ?? P2PAuth.compute(p2pPassword: channel.address.p2pPassword,
                                                localKey: channel.address.localKey, devId: target)
        videoPumps[sid] = Task { [weak self] in
            for await signal in link.signals {
                await self?.videoSignalled(signal, link: link, auth: authValue, streamType: streamType)
            }
        }
        if prepared != nil { return sid }
        do {
            try link.start()
        } catch {
            closeVideo(sessionId: sid)
            throw .mqtt("cannot start the WebRTC offerer: \(error)")
        }
        return sid
    }

    /// PROTOCOL.md 7: what the `fmp4Stream` receiver saw (handshake, segments, errors) on a link
    /// opened with `hevc: true` (kept after the link closes); nil otherwise.
    public func hevcReport(sessionId: String) -> AppHEVCReceiver.Report? {
        videoLinks[sessionId]?.hevcReport ?? finishedHEVC[sessionId]
    }

    /// What the app measured on the session's video so far (kept after the link closes).
    public func videoStats(sessionId: String) -> VideoStats? { videoLinks[sessionId]?.stats ?? finishedVideo[sessionId] }

    /// When each step of the session's link happened (kept after the link closes).
    public func videoLinkTimeline(sessionId: String) -> LinkTimeline? {
        videoLinks[sessionId]?.timeline ?? finishedTimelines[sessionId]
    }

    /// The session's link state as the app sees it (nil: no link).
    public func videoLinkState(sessionId: String) -> LinkState? { videoLinks[sessionId]?.state }

    /// The ICE candidate pair the session's open link uses (nil: no link, or none selected yet).
    public func videoLinkCandidatePair(sessionId: String) -> ICECandidatePair? { videoLinks[sessionId]?.selectedCandidatePair }

    /// The open link's media counters, and when its 302 answer came (nil without a link).
    public func videoLinkStatistics(sessionId: String) -> (stats: LinkStatistics, answerAt: Date?)? {
        videoLinks[sessionId].map { ($0.linkStats, $0.answerArrivedAt) }
    }

    /// `close_reason` of the `disconnect` the device sent for the session, if any.
    public func disconnectReason(sessionId: String) -> Int64? { disconnects[sessionId] }

    public func closeVideo(sessionId: String) {
        linkRules.closed(sessionId: sessionId)
        videoPumps.removeValue(forKey: sessionId)?.cancel()
        guard let link = videoLinks.removeValue(forKey: sessionId) else { return }
        link.close()
        finishedVideo[sessionId] = link.stats
        finishedTimelines[sessionId] = link.timeline
        if let hevc = link.hevcReport { finishedHEVC[sessionId] = hevc }
    }

    private func videoSignalled(_ signal: AppLinkSignal, link: any AppMediaLink, auth: String, streamType: StreamType) {
        guard videoLinks[link.sessionId] === link else { return }
        let header = SignalHeader(from: userId, to: link.devId, sessionId: link.sessionId, tid: link.transactionId)
        switch signal {
        case .offer(let sdp):
            let offer = SignalOffer(sdp: sdp, streamType: streamType, auth: auth, iceServers: link.ice.servers)
            link.offerSent()
            try? publish(SignalMessage(header: header, body: .offer(offer)).envelope(t: clock.nowSeconds()), to: link.devId)
        case .candidate(let line, let index):
            let c = IPCWire.ICECandidate(candidate: line, sdpMLineIndex: index)
            try? publish(SignalMessage(header: header, body: .candidate(c)).envelope(t: clock.nowSeconds()), to: link.devId)
        case .state(let state):
            switch state {
            case .connected: mediaLink(up: true, sessionId: link.sessionId)
            case .lost: mediaLink(up: false, sessionId: link.sessionId)
            default: break
            }
        }
    }

    func receiveSignal(_ s: SignalMessage) {
        let sid = s.header.sessionId
        // A reply to an earlier offer of this session (its `tid` echoed, PROTOCOL.md 4) must not
        // touch the link that replaced it: a `disconnect` refusing the old offer can arrive after
        // the new offer went out. A device that echoes no `tid` is taken at its word.
        if !s.header.tid.isEmpty, let link = videoLinks[sid], s.header.tid != link.transactionId {
            log.log(.debug, "ignored 302 \(s.type.rawValue) for an earlier offer", device: userId,
                    fields: [("session", sid), ("tid", s.header.tid)])
            return
        }
        switch s.body {
        case .answer(let answer):
            guard linkRules.accepts(sessionId: sid, from: s.header.from), let link = videoLinks[sid] else { return }
            link.answerArrived()
            do {
                try link.setRemoteAnswer(answer.sdp)
            } catch {
                log.log(.warning, "bad 302 answer: \(error)", device: userId)
            }
        case .candidate(let c):
            guard linkRules.accepts(sessionId: sid, from: s.header.from), let link = videoLinks[sid], !c.isEndOfCandidates else { return }
            link.addRemoteCandidate(c.wireLine, sdpMLineIndex: c.effectiveMLineIndex)
        case .disconnect(let d):
            guard linkRules.receiveDisconnect(sessionId: sid, from: s.header.from) else { return }
            disconnects[sid] = d.closeReason
            closeVideo(sessionId: sid)
        case .offer, .resolution:
            break
        }
    }
}
