// An answerer whose pipeline was built before its offer (issue 24 item 6: `PreparedAnswerer`):
// the offer's part of `start()` (transceiver directions, ICE servers, the remote offer) comes later.
import CGstWebRTC

extension PeerCore {
    /// Device side, pipeline already playing (`Negotiation.answerLater`): sets the transceivers'
    /// directions and the offer's ICE servers, then the offer; the answer follows as in `start()`.
    func answer(offer: String, directions: [MediaDirection], iceServers: [ICEServer], relayOnly: Bool) throws(WebRTCLinkError) {
        let ready: Bool = fields.withLock { f in
            guard f.phase == .playing else { return false }
            switch f.signalling.remoteDescription {
            case .notSet: return true
            case .set: return false
            }
        }
        guard ready, let webrtc = liveWebRTC() else { throw .wrongLifecycleStep("the prepared pipeline is not waiting for an offer") }
        for (index, direction) in directions.enumerated() {
            guard cgw_webrtc_set_transceiver_direction(webrtc, Int32(index), direction.cDirection) else {
                throw .pipeline("no transceiver \(index)")
            }
        }
        try applyICEServers(iceServers, relayOnly: relayOnly, webrtc: webrtc)
        try setRemoteOffer(offer, webrtc: webrtc)
    }

    func setRemoteOffer(_ offer: String, webrtc: OpaquePointer) throws(WebRTCLinkError) {
        let ok = cgw_webrtc_set_remote_description(
            webrtc, Int32(CGW_SDP_OFFER), offer, onRemoteOfferSet, CoreReference.retained(self), releaseCoreReference)
        guard ok else { throw .invalidOffer("webrtcbin could not parse the offer") }
        flushRemoteCandidates(afterSettingRemoteDescription: webrtc)
    }

    /// Whether the pipeline plays and nothing has gone wrong (a prepared one may be used).
    var isPlayingUnnegotiated: Bool {
        fields.withLock { f in
            guard f.phase == .playing, !f.state.isFinal else { return false }
            if case .notSet = f.signalling.remoteDescription { return true }
            return false
        }
    }
}
