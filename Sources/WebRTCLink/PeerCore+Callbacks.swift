// The functions C calls (DESIGN.md interop rules: file-scope functions, never closures). Each
// context is a retained CoreReference (GStreamerRuntime.swift); each function hands its call to
// the core, if it is still alive, and copies what C lends it.
import CGstWebRTC

private func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

func onLocalCandidate(_ context: UnsafeMutableRawPointer?, _ mline: UInt32, _ candidate: UnsafePointer<CChar>?) {
    coreFrom(context)?.localCandidate(mline: mline, candidate: string(candidate) ?? "")
}

func onICEConnectionState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.iceConnectionState(state)
}

func onPeerConnectionState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.peerConnectionState(state)
}

func onGatheringState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.gatheringState(state)
}

func onDTLSState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.dtlsState(state)
}

func onNegotiationNeeded(_ context: UnsafeMutableRawPointer?) {
    coreFrom(context)?.negotiationNeeded()
}

func onPadAdded(
    _ context: UnsafeMutableRawPointer?, _ pad: OpaquePointer?, _ media: UnsafePointer<CChar>?,
    _ encoding: UnsafePointer<CChar>?
) {
    guard let pad else { return }
    coreFrom(context)?.padAdded(pad: pad, media: string(media) ?? "", encoding: string(encoding) ?? "")
}

func onBusMessage(
    _ context: UnsafeMutableRawPointer?, _ kind: Int32, _ source: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?
) {
    coreFrom(context)?.busMessage(kind: kind, source: string(source) ?? "", text: string(text) ?? "")
}

func onWatchdogTick(_ context: UnsafeMutableRawPointer?) -> Bool {
    coreFrom(context)?.watchdogTick() ?? false
}

func onRemoteOfferSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.remoteOfferSet(error: string(error))
}

func onRemoteAnswerSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.remoteAnswerSet(error: string(error))
}

func onLocalDescriptionCreated(
    _ context: UnsafeMutableRawPointer?, _ sdp: UnsafePointer<CChar>?, _ error: UnsafePointer<CChar>?
) {
    coreFrom(context)?.localDescriptionCreated(sdp: string(sdp), error: string(error))
}

func onLocalDescriptionSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.localDescriptionSet(error: string(error))
}

func onVideoFrame(
    _ context: UnsafeMutableRawPointer?, _ sample: OpaquePointer?, _ luma: UnsafePointer<UInt8>?, _ width: Int32,
    _ height: Int32, _ stride: Int32, _ pts: Int64, _ arrival: Int64
) {
    coreFrom(context)?.videoFrame(
        sample: sample, luma: luma, width: width, height: height, stride: stride, pts: pts, arrival: arrival)
}

func onKeyUnitRequested(_ context: UnsafeMutableRawPointer?) {
    guard let core = coreFrom(context), !core.currentState.isFinal else { return }
    core.events.keyFrameRequested?()
}

/// An access unit of the peer's video counted at the RTP level (a counted link: no depayloader).
func onCountedAccessUnit(_ context: UnsafeMutableRawPointer?, _ key: Bool, _ missing: UInt32, _ late: UInt32, _ advance: UInt32) {
    coreFrom(context)?.receivedAccessUnit(
        isKeyFrame: key, packetsMissing: Int(missing), packetsLate: Int(late), timestampAdvance: Int(advance))
}

func onAudioSample(_ context: UnsafeMutableRawPointer?) {
    coreFrom(context)?.count { $0.audioBuffersReceived += 1 }
}

func onVideoPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes, media: "video")
}

func onAudioPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes, media: "audio")
}

func onOtherPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes)
}

func onRTCPReceived(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtcpReports: Int(buffers))
}

func onEncodedVideo(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.count {
        $0.videoFramesSent += Int(buffers)
        $0.videoKeyFramesSent += Int(keys)
    }
}


