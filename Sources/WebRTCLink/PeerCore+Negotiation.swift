// The offer/answer exchange and ICE candidates both ways (PROTOCOL.md section 4): what webrtcbin
// is asked to create and set, and which candidates wait for the peer's description.
import CGstWebRTC

extension PeerCore {
    // MARK: Descriptions

    /// Device side: the app's offer is set (`start`); now the answer.
    func remoteOfferSet(error: String?) {
        if let error { return fail(.negotiationFailed("set-remote-description: \(error)")) }
        guard let webrtc = liveWebRTC() else { return }
        cgw_webrtc_create_answer(webrtc, onLocalDescriptionCreated, CoreReference.retained(self), releaseCoreReference)
    }

    /// App side: webrtcbin needs negotiation. The first time once playing, it makes the offer.
    func negotiationNeeded() {
        let first: Bool = fields.withLock { f in
            guard f.phase == .playing else { return false }
            switch f.signalling.offer {
            case .held, .requested: return false
            case .notRequested:
                f.signalling.offer = .requested
                return true
            }
        }
        guard first, let webrtc = liveWebRTC() else { return }
        cgw_webrtc_create_offer(webrtc, onLocalDescriptionCreated, CoreReference.retained(self), releaseCoreReference)
    }

    func localDescriptionCreated(sdp created: String?, error: String?) {
        guard let created, error == nil else {
            return fail(.negotiationFailed("create-\(isAnswerer ? "answer" : "offer"): \(error ?? "no SDP")"))
        }
        guard let webrtc = liveWebRTC() else { return }
        let sdp = editLocalDescription(created)
        fields.withLock { $0.signalling.pendingLocalDescription = sdp }
        let type = Int32(isAnswerer ? CGW_SDP_ANSWER : CGW_SDP_OFFER)
        if !cgw_webrtc_set_local_description(webrtc, type, sdp, onLocalDescriptionSet, CoreReference.retained(self), releaseCoreReference) {
            fail(.negotiationFailed("webrtcbin could not parse its own description"))
        }
    }

    /// Our description is webrtcbin's now: only then does it go to the peer (see
    /// `SignallingProgress.pendingLocalDescription`).
    func localDescriptionSet(error: String?) {
        if let error { return fail(.negotiationFailed("set-local-description: \(error)")) }
        let sdp: String? = fields.withLock { f in
            defer { f.signalling.pendingLocalDescription = nil }
            return f.phase == .closed ? nil : f.signalling.pendingLocalDescription
        }
        guard let sdp else { return }
        events.localDescription(sdp)
        // webrtcbin emits candidates from the same operations thread after this reply, so none
        // should have come yet; any that did waited and go now, in order.
        while true {
            let waiting: [ICECandidate] = fields.withLock { f in
                let w = f.signalling.candidatesBeforeDescription
                f.signalling.candidatesBeforeDescription = []
                if w.isEmpty { f.signalling.localDescriptionSent = true }
                return w
            }
            if waiting.isEmpty { return }
            for candidate in waiting { events.localCandidate(candidate) }
        }
    }

    /// Sends a local candidate (or the end of them), or keeps it until our description went out.
    private func sendOrKeep(_ candidate: ICECandidate) {
        let now: Bool = fields.withLock { f in
            if f.signalling.localDescriptionSent { return true }
            f.signalling.candidatesBeforeDescription.append(candidate)
            return false
        }
        if now { events.localCandidate(candidate) }
    }

    /// App side: the device's answer.
    func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError) {
        _ = try SessionDescriptionSummary(parsing: sdp)
        guard let webrtc = liveWebRTC() else { throw .closed }
        let ok = cgw_webrtc_set_remote_description(
            webrtc, Int32(CGW_SDP_ANSWER), sdp, onRemoteAnswerSet, CoreReference.retained(self), releaseCoreReference)
        guard ok else { throw .invalidAnswer("webrtcbin could not parse the answer") }
        flushRemoteCandidates(afterSettingRemoteDescription: webrtc)
    }

    func remoteAnswerSet(error: String?) {
        if let error { fail(.negotiationFailed("set-remote-description: \(error)")) }
    }

    private var isAnswerer: Bool {
        switch negotiation {
        case .answer, .answerLater: return true
        case .offer: return false
        }
    }

    // MARK: Candidates

    func addRemoteCandidate(_ line: String, sdpMLineIndex: Int) {
        let candidate = ICECandidate.normalizedLine(line)
        guard !candidate.isEmpty else { return }  // end of candidates: nothing to wait for
        let mline = UInt32(max(0, sdpMLineIndex))
        let target: OpaquePointer? = fields.withLock { f in
            guard f.phase != .closed else { return nil }
            switch f.signalling.remoteDescription {
            case .notSet(var waiting):
                waiting.append(RemoteCandidate(mLineIndex: mline, line: candidate))
                f.signalling.remoteDescription = .notSet(waitingCandidates: waiting)
                return nil
            case .set:
                return f.webrtc
            }
        }
        if let target { cgw_webrtc_add_ice_candidate(target, mline, candidate) }
    }

    /// webrtcbin runs its operations in order, so candidates emitted right after the remote
    /// description are applied after it.
    func flushRemoteCandidates(afterSettingRemoteDescription webrtc: OpaquePointer) {
        let waiting: [RemoteCandidate] = fields.withLock { f in
            defer { f.signalling.remoteDescription = .set }
            switch f.signalling.remoteDescription {
            case .notSet(let waiting): return waiting
            case .set: return []
            }
        }
        for candidate in waiting { cgw_webrtc_add_ice_candidate(webrtc, candidate.mLineIndex, candidate.line) }
    }

    func localCandidate(mline: UInt32, candidate: String) {
        if candidate.isEmpty { return sendEndOfCandidates() }
        let open: Bool = fields.withLock { f in
            guard f.phase != .closed else { return false }
            switch f.signalling.localCandidates {
            case .trickling: return true
            case .ended: return false
            }
        }
        if open { sendOrKeep(ICECandidate(candidate: candidate, sdpMLineIndex: Int(mline))) }
    }

    func gatheringState(_ value: Int32) {
        switch ICEGatheringState(value) {
        case .complete: sendEndOfCandidates()
        case .new, .gathering, nil: break
        }
    }

    /// The end of our candidates (an empty one), once; and not after close.
    private func sendEndOfCandidates() {
        let first: Bool = fields.withLock { f in
            defer { f.signalling.localCandidates = .ended }
            switch f.signalling.localCandidates {
            case .trickling: return f.phase != .closed
            case .ended: return false
            }
        }
        if first { sendOrKeep(ICECandidate(candidate: "", sdpMLineIndex: 0)) }
    }
}
