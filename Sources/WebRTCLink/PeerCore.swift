// The part both roles share: one pipeline with one webrtcbin, its signals, ICE candidates both
// ways, the link state (PROTOCOL.md section 4: lost on ICE disconnected/failed, DTLS closed, or 5 s
// of silence), receive branches, counters, and teardown.
//
// Threads: C calls the file-scope functions at the bottom from GStreamer's threads and from the
// shared loop thread; every mutable field is behind `lock`, and user callbacks are called with the
// lock released.
import CGstWebRTC
import Dispatch
import Foundation

/// Callbacks of a link. Each runs on a GStreamer or GLib thread, never the main actor: copy what
/// you need and return quickly (hop to your actor with a Task or a continuation).
public struct LinkEvents: Sendable {
    /// The local SDP to send: the answer (device) or the offer (app simulator). Called once,
    /// before any `localCandidate`.
    public var localDescription: @Sendable (String) -> Void
    /// A trickled local candidate; a last one with an empty `candidate` means end of candidates.
    public var localCandidate: @Sendable (ICECandidate) -> Void
    /// Every state change, in order; `.lost(...)` and `.closed` are final.
    public var stateChanged: @Sendable (LinkState) -> Void
    /// Each decoded video frame received from the peer (luma copied). nil: frames are only counted
    /// (and the latest kept for snapshots).
    public var videoFrame: (@Sendable (DecodedVideoFrame) -> Void)?
    /// The peer asked for a key frame of the video this side sends (RTCP PLI/FIR), when that video
    /// comes from outside (`VideoInput.h264AccessUnits`: a shared encoder must make it).
    public var keyFrameRequested: (@Sendable () -> Void)?
    /// An output of the device's screen or sound (`LocalMediaDevices`) could not open or failed;
    /// the link goes on without it. The text says which and why.
    public var outputProblem: (@Sendable (String) -> Void)?
    /// A data channel: one the peer opened (answerer), or one this side asked for with
    /// `OfferConfiguration.dataChannels` (offerer). Set its handlers at once (PROTOCOL.md 7).
    public var dataChannel: (@Sendable (WebRTCDataChannel) -> Void)?

    public init(
        localDescription: @escaping @Sendable (String) -> Void,
        localCandidate: @escaping @Sendable (ICECandidate) -> Void,
        stateChanged: @escaping @Sendable (LinkState) -> Void = { _ in },
        videoFrame: (@Sendable (DecodedVideoFrame) -> Void)? = nil,
        keyFrameRequested: (@Sendable () -> Void)? = nil,
        outputProblem: (@Sendable (String) -> Void)? = nil,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil
    ) {
        self.dataChannel = dataChannel
        self.localDescription = localDescription
        self.localCandidate = localCandidate
        self.stateChanged = stateChanged
        self.videoFrame = videoFrame
        self.keyFrameRequested = keyFrameRequested
        self.outputProblem = outputProblem
    }
}

/// How the core starts negotiating once its pipeline plays.
enum Negotiation: Sendable {
    /// Set this remote offer, create and report the answer.
    case answer(offer: String)
    /// Create and report an offer when webrtcbin asks for negotiation.
    case offer
}

/// One transceiver setting applied before the pipeline plays.
struct TransceiverSetup: Sendable {
    enum Target: Sendable {
        /// The transceiver webrtcbin made for a linked sink pad, by index.
        case existing(Int)
        /// A new transceiver (no sink pad: receive only).
        case added
    }
    var target: Target
    var direction: MediaDirection
    /// Codec preferences (caps string), nil to leave them.
    var caps: String?
}

private let teardownQueue = DispatchQueue(label: "ipcemu.webrtc.teardown")

final class PeerCore: @unchecked Sendable {
    let options: LinkOptions
    let events: LinkEvents
    private let negotiation: Negotiation
    private let lock = NSLock()

    // Owned GStreamer objects: valid from start() until deinit.
    private var pipeline: OpaquePointer?
    private var webrtc: OpaquePointer?
    private var videoIn: OpaquePointer?
    private var receiveBins: [OpaquePointer] = []
    private var dtlsTransport: UnsafeMutableRawPointer?
    private var latestSample: OpaquePointer?
    private var receivedVideoPad: OpaquePointer?

    private var webrtcHandlers: [UInt] = []
    private var dtlsHandler: UInt = 0
    private var busWatch: UInt32 = 0
    private var watchdog: UInt32 = 0

    private var state: LinkState = .new
    private var started = false
    private var closed = false
    private var offerRequested = false
    private var playing = false
    private var remoteDescriptionSet = false
    private var pendingRemoteCandidates: [(UInt32, String)] = []
    private var endOfCandidatesSent = false
    private var rtcpProbed = false
    private var stalledRestarts = 0
    private var rtcpIntervalSet = false
    private var lastPeerPacketUptime: UInt64 = 0
    private var statistics = LinkStatistics()
    private var ptsOffset: Int64?
    private var lastPushedPts: Int64 = -1
    private var frameDurationNanos: Int64 = 33_333_333

    /// Applied to the local description webrtcbin creates, before it is reported and set.
    private let editLocalDescription: @Sendable (String) -> String

    /// Received H.264 is decoded; false: only depayloaded and counted.
    private let decodesVideo: Bool
    private var lastAccessUnitUnixNanos: Int64 = 0
    /// Where received video and audio go besides being counted (ReceiveOutputs.swift).
    private let devices: LocalMediaDevices
    /// Receive bins with guarded output branches (entry element names), finished before teardown.
    private var outputBranches: [(bin: OpaquePointer, entry: String)] = []
    private var outputFailuresReported: Set<String> = []

    /// Data channels the offerer creates before its offer (so that it has an m=application line).
    private let dataChannelLabels: [String]

    init(
        options: LinkOptions, events: LinkEvents, negotiation: Negotiation, decodesVideo: Bool = true,
        devices: LocalMediaDevices = LocalMediaDevices(),
        dataChannelLabels: [String] = [],
        editLocalDescription: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.devices = devices
        self.dataChannelLabels = dataChannelLabels
        self.decodesVideo = decodesVideo
        self.options = options
        self.events = events
        self.negotiation = negotiation
        self.editLocalDescription = editLocalDescription
    }

    deinit {
        if let latestSample { cgw_sample_unref(latestSample) }
        if let receivedVideoPad { cgw_pad_unref(receivedVideoPad) }
        if let dtlsTransport { cgw_object_unref(dtlsTransport) }
        for bin in receiveBins { cgw_element_unref(bin) }
        if let videoIn { cgw_element_unref(videoIn) }
        if let webrtc { cgw_element_unref(webrtc) }
        if let pipeline {
            cgw_pipeline_stop(pipeline)
            cgw_element_unref(pipeline)
        }
    }

    // MARK: Start

    /// Builds the pipeline, applies transceiver settings, plays, and starts negotiating.
    func start(description: String, transceivers: [TransceiverSetup], frameRate: Int?) throws(WebRTCLinkError) {
        try GStreamerRuntime.start()
        lock.lock()
        if started || closed {
            lock.unlock()
            throw closed ? .closed : .wrongLifecycleStep("start() called twice")
        }
        started = true
        lock.unlock()
        if let frameRate, frameRate > 0 { frameDurationNanos = 1_000_000_000 / Int64(frameRate) }

        var error: UnsafeMutablePointer<CChar>?
        guard let pipeline = cgw_pipeline_new_from_description(description, &error) else {
            throw .pipeline(takeCString(error))
        }
        guard let webrtc = cgw_bin_get_child(pipeline, "webrtc") else {
            cgw_element_unref(pipeline)
            throw .pipeline("no webrtcbin in the pipeline")
        }
        let videoIn = cgw_bin_get_child(pipeline, "videoin")
        lock.withLock {
            self.pipeline = pipeline
            self.webrtc = webrtc
            self.videoIn = videoIn
        }

        try configureICE(webrtc)
        for setup in transceivers {
            switch setup.target {
            case .existing(let index):
                guard cgw_webrtc_set_transceiver_direction(webrtc, Int32(index), setup.direction.cDirection) else {
                    throw .pipeline("no transceiver \(index)")
                }
                if let caps = setup.caps, !cgw_webrtc_set_transceiver_codec_preferences(webrtc, Int32(index), caps) {
                    throw .pipeline("bad codec preferences \(caps)")
                }
            case .added:
                guard cgw_webrtc_add_transceiver(webrtc, setup.direction.cDirection, setup.caps ?? "ANY") else {
                    throw .pipeline("could not add a transceiver with \(setup.caps ?? "ANY")")
                }
            }
        }
        connectSignals(pipeline: pipeline, webrtc: webrtc)

        if let encoded = cgw_bin_get_child(pipeline, "videoencoded") {
            if let pad = cgw_element_get_static_pad(encoded, "src") {
                _ = cgw_pad_count_buffers(pad, onEncodedVideo, CoreReference.retained(self), releaseCoreReference)
                cgw_pad_unref(pad)
            }
            cgw_element_unref(encoded)
        }
        if let videoIn, events.keyFrameRequested != nil, let pad = cgw_element_get_static_pad(videoIn, "src") {
            _ = cgw_pad_on_key_unit_request(pad, onKeyUnitRequested, CoreReference.retained(self), releaseCoreReference)
            cgw_pad_unref(pad)
        }

        transition(to: .connecting)
        guard cgw_pipeline_play(pipeline) else {
            throw .pipeline("the pipeline refused to play (a missing element or device?)")
        }
        lock.withLock { playing = true }
        if let report = events.dataChannel {
            for label in dataChannelLabels {
                guard let channel = cgw_webrtc_create_data_channel(webrtc, label, true) else {
                    throw .pipeline("webrtcbin could not create the data channel '\(label)' (no SCTP elements?)")
                }
                report(WebRTCDataChannel(taking: channel, label: label))
            }
        }
        // Negotiation starts only once everything plays (webrtcbin adds transport elements then).
        if case .offer = negotiation { negotiationNeeded() }
        if case .answer(let offer) = negotiation {
            let ok = cgw_webrtc_set_remote_description(
                webrtc, Int32(CGW_SDP_OFFER), offer, onRemoteOfferSet, CoreReference.retained(self),
                releaseCoreReference)
            guard ok else { throw .invalidOffer("webrtcbin could not parse the offer") }
            flushRemoteCandidates(afterSettingRemoteDescription: webrtc)
        }
    }

    private func configureICE(_ webrtc: OpaquePointer) throws(WebRTCLinkError) {
        guard cgw_webrtc_set_ice_protocols(webrtc, true, options.tcpCandidates) else {
            throw .pipeline("webrtcbin's ICE agent has no ice-udp/ice-tcp properties")
        }
        let addresses = options.localAddresses ?? GStreamerRuntime.localInterfaceAddresses()
        for address in addresses where !address.isEmpty {
            guard cgw_webrtc_add_local_address(webrtc, address) else {
                throw .pipeline("the ICE agent refused local address \(address)")
            }
        }
        var stunSet = false
        for server in options.iceServers {
            for url in server.urls {
                if let stun = ICEURL.stunServer(url), !stunSet {
                    stunSet = cgw_object_set_string(UnsafeMutableRawPointer(webrtc), "stun-server", stun)
                } else if let turn = ICEURL.turnServer(url, username: server.username, credential: server.credential) {
                    _ = cgw_webrtc_add_turn_server(webrtc, turn)
                }
            }
        }
    }

    private func connectSignals(pipeline: OpaquePointer, webrtc: OpaquePointer) {
        var handlers: [UInt] = []
        handlers.append(cgw_connect_ice_candidate(webrtc, onLocalCandidate, CoreReference.retained(self), releaseCoreReference))
        handlers.append(cgw_connect_ice_connection_state(webrtc, onICEConnectionState, CoreReference.retained(self), releaseCoreReference))
        handlers.append(cgw_connect_connection_state(webrtc, onPeerConnectionState, CoreReference.retained(self), releaseCoreReference))
        handlers.append(cgw_connect_ice_gathering_state(webrtc, onGatheringState, CoreReference.retained(self), releaseCoreReference))
        handlers.append(cgw_connect_pad_added(webrtc, onPadAdded, CoreReference.retained(self), releaseCoreReference))
        if let report = events.dataChannel {
            let sink = Unmanaged.passRetained(DataChannelSink(report: report)).toOpaque()
            handlers.append(cgw_connect_data_channel(webrtc, onPeerDataChannel, sink, releaseDataChannelSink))
        }
        if case .offer = negotiation {
            handlers.append(cgw_connect_negotiation_needed(webrtc, onNegotiationNeeded, CoreReference.retained(self), releaseCoreReference))
        }
        let bus = cgw_bus_watch(pipeline, onBusMessage, CoreReference.retained(self), releaseCoreReference)
        let interval = UInt32(max(50, min(500, options.silenceTimeout.milliseconds / 10)))
        let timer = cgw_shared_loop_add_timer(interval, onWatchdogTick, CoreReference.retained(self), releaseCoreReference)
        lock.withLock {
            webrtcHandlers = handlers
            busWatch = bus
            watchdog = timer
        }
    }

    // MARK: Negotiation

    fileprivate func remoteOfferSet(error: String?) {
        if let error { return fail(.negotiationFailed("set-remote-description: \(error)")) }
        guard let webrtc = liveWebRTC() else { return }
        cgw_webrtc_create_answer(webrtc, onLocalDescriptionCreated, CoreReference.retained(self), releaseCoreReference)
    }

    fileprivate func negotiationNeeded() {
        let first: Bool = lock.withLock {
            guard playing, !offerRequested, !closed else { return false }
            offerRequested = true
            return true
        }
        guard first, let webrtc = liveWebRTC() else { return }
        cgw_webrtc_create_offer(webrtc, onLocalDescriptionCreated, CoreReference.retained(self), releaseCoreReference)
    }

    fileprivate func localDescriptionCreated(sdp created: String?, error: String?) {
        guard let created, error == nil else {
            return fail(.negotiationFailed("create-\(isAnswerer ? "answer" : "offer"): \(error ?? "no SDP")"))
        }
        guard let webrtc = liveWebRTC() else { return }
        let sdp = editLocalDescription(created)
        events.localDescription(sdp)
        let type = Int32(isAnswerer ? CGW_SDP_ANSWER : CGW_SDP_OFFER)
        if !cgw_webrtc_set_local_description(webrtc, type, sdp, onLocalDescriptionSet, CoreReference.retained(self), releaseCoreReference) {
            fail(.negotiationFailed("webrtcbin could not parse its own description"))
        }
    }

    fileprivate func localDescriptionSet(error: String?) {
        if let error { fail(.negotiationFailed("set-local-description: \(error)")) }
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

    fileprivate func remoteAnswerSet(error: String?) {
        if let error { fail(.negotiationFailed("set-remote-description: \(error)")) }
    }

    private var isAnswerer: Bool {
        if case .answer = negotiation { return true }
        return false
    }

    // MARK: Candidates

    func addRemoteCandidate(_ line: String, sdpMLineIndex: Int) {
        let candidate = ICECandidate.normalizedLine(line)
        guard !candidate.isEmpty else { return }  // end of candidates: nothing to wait for
        let mline = UInt32(max(0, sdpMLineIndex))
        let target: OpaquePointer? = lock.withLock {
            guard !closed else { return nil }
            guard remoteDescriptionSet else {
                pendingRemoteCandidates.append((mline, candidate))
                return nil
            }
            return webrtc
        }
        if let target { cgw_webrtc_add_ice_candidate(target, mline, candidate) }
    }

    /// webrtcbin runs its operations in order, so candidates emitted right after the remote
    /// description are applied after it.
    private func flushRemoteCandidates(afterSettingRemoteDescription webrtc: OpaquePointer) {
        let pending: [(UInt32, String)] = lock.withLock {
            remoteDescriptionSet = true
            defer { pendingRemoteCandidates = [] }
            return pendingRemoteCandidates
        }
        for (mline, candidate) in pending { cgw_webrtc_add_ice_candidate(webrtc, mline, candidate) }
    }

    fileprivate func localCandidate(mline: UInt32, candidate: String) {
        if candidate.isEmpty { return sendEndOfCandidates() }
        let open = lock.withLock { !closed && !endOfCandidatesSent }
        if open { events.localCandidate(ICECandidate(candidate: candidate, sdpMLineIndex: Int(mline))) }
    }

    fileprivate func gatheringState(_ value: Int32) {
        if value == 2 { sendEndOfCandidates() }
    }

    private func sendEndOfCandidates() {
        let first: Bool = lock.withLock {
            defer { endOfCandidatesSent = true }
            return !endOfCandidatesSent && !closed
        }
        if first { events.localCandidate(ICECandidate(candidate: "", sdpMLineIndex: 0)) }
    }

    // MARK: State

    fileprivate func iceConnectionState(_ value: Int32) {
        switch value {
        case 4: fail(.iceFailed)
        case 5: fail(.iceDisconnected)
        default: break
        }
    }

    fileprivate func peerConnectionState(_ value: Int32) {
        switch value {
        case 2:
            lock.withLock { lastPeerPacketUptime = DispatchTime.now().uptimeNanoseconds }
            transition(to: .connected)
        case 3: fail(.iceDisconnected)
        case 4: fail(.connectionFailed)
        case 5: fail(.dtlsClosed)
        default: break
        }
    }

    fileprivate func dtlsState(_ value: Int32) {
        switch value {
        case 1: fail(.dtlsClosed)
        case 2: fail(.dtlsFailed)
        default: break
        }
    }

    fileprivate func busMessage(kind: Int32, source: String, text: String) {
        guard kind == Int32(CGW_BUS_ERROR) else { return }
        if OutputDescriptions.isOutputElement(source) {
            // A display or playback sink failed: its branch stops (guarded), the call goes on.
            let first = lock.withLock { outputFailuresReported.insert(source).inserted }
            if first { events.outputProblem?("\(source) failed: \(text)") }
            return
        }
        fail(.pipelineError("\(source): \(text)"))
    }

    private func fail(_ reason: LinkLossReason) { transition(to: .lost(reason)) }

    /// Moves to a new state unless the current one is final or the link is closed.
    private func transition(to next: LinkState) {
        let changed: Bool = lock.withLock {
            guard !closed, !state.isFinal, state != next else { return false }
            state = next
            return true
        }
        if changed { events.stateChanged(next) }
    }

    var currentState: LinkState { lock.withLock { state } }

    // MARK: Watchdog (shared loop thread)

    /// Hooks what only exists after negotiation (RTCP interval, DTLS state), then
    /// checks for silence.
    fileprivate func watchdogTick() -> Bool {
        let snapshot = lock.withLock { (closed, webrtc, rtcpIntervalSet, dtlsHandler, state, lastPeerPacketUptime, rtcpProbed) }
        let (isClosed, webrtcElement, rtcpSet, dtls, current, lastPacket, probed) = snapshot
        guard !isClosed, let webrtc = webrtcElement else { return false }
        let restarted = cgw_webrtc_restart_stalled_receivers(webrtc)
        if restarted > 0 { lock.withLock { stalledRestarts += Int(restarted) } }
        if !probed, cgw_webrtc_count_received_rtcp(webrtc, onRTCPReceived, CoreReference.retained(self), releaseCoreReference) > 0 {
            lock.withLock { rtcpProbed = true }
        }
        if !rtcpSet, cgw_webrtc_set_rtcp_interval(webrtc, UInt32(max(100, options.rtcpIntervalMs))) > 0 {
            lock.withLock { rtcpIntervalSet = true }
        }
        if dtls == 0 {
            var transport: UnsafeMutableRawPointer?
            let handler = cgw_connect_dtls_transport_state(webrtc, onDTLSState, CoreReference.retained(self), releaseCoreReference, &transport)
            if handler != 0 {
                lock.withLock {
                    dtlsHandler = handler
                    dtlsTransport = transport
                }
            } else if let transport {
                cgw_object_unref(transport)
            }
        }
        if current == .connected {
            let silentFor = DispatchTime.now().uptimeNanoseconds &- lastPacket
            if silentFor > options.silenceTimeout.nanoseconds { fail(.peerSilent) }
        }
        return !currentState.isFinal
    }

    // MARK: Receiving

    fileprivate func padAdded(pad: OpaquePointer, media: String, encoding: String) {
        guard let pipeline = livePipeline() else { return }
        let countOnly = !decodesVideo && media == "video" && encoding.uppercased() == "H264"
        let outputs = countOnly ? nil : OutputDescriptions.receiveBranch(media: media, encoding: encoding, devices: devices)
        for problem in outputs?.problems ?? [] { events.outputProblem?(problem) }
        let description = countOnly ? PipelineDescriptions.countingH264Branch
            : outputs?.description
            ?? PipelineDescriptions.receiveBranch(media: media, encoding: encoding) ?? PipelineDescriptions.discardBranch
        var error: UnsafeMutablePointer<CChar>?
        guard let bin = cgw_bin_new_from_description(description, &error) else {
            return fail(.pipelineError("receive branch for \(media)/\(encoding): \(takeCString(error))"))
        }
        for (element, property, value) in outputs?.properties ?? [] {
            if let child = cgw_bin_get_child(bin, element) {
                _ = cgw_object_set_string(UnsafeMutableRawPointer(child), property, value)
                cgw_element_unref(child)
            }
        }
        for entry in outputs?.entries ?? [] where cgw_output_guard(bin, entry) {
            lock.withLock { outputBranches.append((bin, entry)) }
        }
        if let sink = cgw_bin_get_child(bin, "frames") {
            _ = cgw_appsink_on_video_frame(sink, onVideoFrame, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        if let sink = cgw_bin_get_child(bin, "units") {
            _ = cgw_appsink_on_buffer(sink, onReceivedAccessUnit, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        if let sink = cgw_bin_get_child(bin, "sound") {
            _ = cgw_appsink_on_sample(sink, onAudioSample, CoreReference.retained(self), releaseCoreReference)
            cgw_element_unref(sink)
        }
        let counter: cgw_buffers_fn = media == "video" ? onVideoPackets : media == "audio" ? onAudioPackets : onOtherPackets
        _ = cgw_pad_count_buffers(pad, counter, CoreReference.retained(self), releaseCoreReference)
        lock.withLock {
            receiveBins.append(bin)
            if media == "video", receivedVideoPad == nil {
                receivedVideoPad = pad
                _ = cgw_object_ref(UnsafeMutableRawPointer(pad))
            }
        }
        if !cgw_link_pad_to_bin(pipeline, pad, bin, &error) {
            fail(.pipelineError("linking the \(media) receive branch: \(takeCString(error))"))
        }
    }

    fileprivate func videoFrame(
        sample: OpaquePointer?, luma: UnsafePointer<UInt8>?, width: Int32, height: Int32, stride: Int32,
        pts: Int64, arrival: Int64
    ) {
        let old: OpaquePointer? = lock.withLock {
            statistics.videoFramesReceived += 1
            statistics.receivedVideoWidth = Int(width)
            statistics.receivedVideoHeight = Int(height)
            defer { latestSample = cgw_sample_ref(sample) }
            return latestSample
        }
        if let old { cgw_sample_unref(old) }
        guard let handler = events.videoFrame, let luma, width > 0, height > 0, stride >= width else { return }
        let bytes = Array(UnsafeBufferPointer(start: luma, count: Int(stride) * Int(height)))
        handler(DecodedVideoFrame(
            luma: bytes, width: Int(width), height: Int(height), stride: Int(stride), arrivalUnixNanos: arrival,
            ptsNanos: pts))
    }

    /// A depayloaded access unit of the peer's video (count-only receive path).
    fileprivate func receivedAccessUnit(isKeyFrame: Bool) {
        let now = cgw_unix_time_ns()
        lock.withLock {
            statistics.videoAccessUnitsReceived += 1
            if isKeyFrame { statistics.videoKeyFramesReceived += 1 }
            if lastAccessUnitUnixNanos == 0 {
                statistics.firstAccessUnitUnixNanos = now
            } else {
                let gapMs = Int((now - lastAccessUnitUnixNanos) / 1_000_000)
                statistics.longestAccessUnitGapMs = max(statistics.longestAccessUnitGapMs, gapMs)
            }
            lastAccessUnitUnixNanos = now
            statistics.lastAccessUnitUnixNanos = now
        }
    }

    fileprivate func count(_ update: (inout LinkStatistics) -> Void) {
        lock.withLock { update(&statistics) }
    }

    /// Something came from the peer: RTP on a receive pad, or an RTCP report.
    fileprivate func heardFromPeer(rtpPackets: Int = 0, rtpBytes: Int = 0, media: String = "", rtcpReports: Int = 0) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock {
            if media == "video" { statistics.videoPacketsReceived += rtpPackets }
            if media == "audio" { statistics.audioPacketsReceived += rtpPackets }
            statistics.rtpBytesReceived += rtpBytes
            statistics.rtcpReportsReceived += rtcpReports
            lastPeerPacketUptime = now
        }
    }

    var stats: LinkStatistics {
        lock.withLock {
            var copy = statistics
            copy.stalledReceiverRestarts = stalledRestarts
            return copy
        }
    }

    /// The pipeline as a Graphviz graph, for debugging ("" before start).
    var pipelineGraph: String {
        guard let pipeline = lock.withLock({ self.pipeline }) else { return "" }
        return takeCString(cgw_pipeline_graph_dot(pipeline))
    }

    /// Asks the peer for a key frame (RTCP PLI/FIR) on the received video. False before video arrives.
    func requestKeyFrame() -> Bool {
        guard let pad = lock.withLock({ closed ? nil : receivedVideoPad }) else { return false }
        return cgw_pad_request_key_unit_upstream(pad)
    }

    /// The latest decoded video frame from the peer, as JPEG.
    func snapshotJPEG() throws(WebRTCLinkError) -> [UInt8] {
        guard let sample = lock.withLock({ cgw_sample_ref(latestSample) }) else {
            throw .snapshotUnavailable("no video frame received yet")
        }
        defer { cgw_sample_unref(sample) }
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        guard cgw_sample_encode_jpeg(sample, &bytes, &length, &error), let bytes else {
            throw .snapshotUnavailable(takeCString(error))
        }
        defer { cgw_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    // MARK: Sending from appsrc

    /// Pushes one buffer into the "videoin" appsrc. The caller's PTS (any clock) is mapped onto the
    /// pipeline's running time, keeping its spacing; nil or a jump of more than a second re-anchors.
    func pushVideoBuffer(_ bytes: UnsafeRawBufferPointer, ptsNanos: Int64?, keyFrame: Bool) -> Bool {
        guard let (appsrc, pipeline) = lock.withLock({ () -> (OpaquePointer, OpaquePointer)? in
            guard !closed, let videoIn, let pipeline else { return nil }
            return (videoIn, pipeline)
        }) else { return false }
        let running = cgw_element_running_time_ns(pipeline)
        let pts: Int64 = lock.withLock {
            guard running >= 0 else { return -1 }
            var mapped = running
            if let ptsNanos {
                if let offset = ptsOffset, abs(ptsNanos + offset - running) < 1_000_000_000 {
                    mapped = ptsNanos + offset
                } else {
                    ptsOffset = running - ptsNanos
                }
            }
            if mapped <= lastPushedPts { mapped = lastPushedPts + 1 }
            lastPushedPts = mapped
            return mapped
        }
        return cgw_appsrc_push(appsrc, bytes.baseAddress, bytes.count, pts, frameDurationNanos, !keyFrame)
    }

    // MARK: Close

    /// Stops everything and reports `.closed`. Idempotent. From a GStreamer thread (inside a
    /// callback) the teardown finishes on a private queue shortly after.
    func close() {
        let first: Bool = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        if cgw_current_thread_runs_gstreamer_callbacks() {
            teardownQueue.async { self.teardown() }
        } else {
            teardown()
        }
    }

    private func teardown() {
        let (pipeline, webrtc, handlers, dtls, transport, bus, timer, appsrc) = lock.withLock {
            (self.pipeline, self.webrtc, webrtcHandlers, dtlsHandler, dtlsTransport, busWatch, watchdog, videoIn)
        }

        cgw_shared_loop_remove_source(timer)
        cgw_shared_loop_remove_source(bus)
        if let webrtc { for handler in handlers { cgw_signal_disconnect(UnsafeMutableRawPointer(webrtc), handler) } }
        if let transport { cgw_signal_disconnect(transport, dtls) }
        if let appsrc { cgw_appsrc_end_of_stream(appsrc) }
        // A recording writes its index (the end-of-stream reaches its sink) before the pipeline stops.
        for (bin, entry) in lock.withLock({ outputBranches }) where !cgw_output_failed(bin, entry) {
            if !cgw_output_finish(bin, entry, 3000) { events.outputProblem?("\(entry) did not finish within 3 s") }
        }
        if let pipeline { cgw_pipeline_stop(pipeline) }
        let report: Bool = lock.withLock {
            defer { state = .closed }
            return state != .closed
        }
        if report { events.stateChanged(.closed) }
    }

    private func liveWebRTC() -> OpaquePointer? { lock.withLock { closed ? nil : webrtc } }
    private func livePipeline() -> OpaquePointer? { lock.withLock { closed ? nil : pipeline } }
}

// MARK: - ICE server URLs

enum ICEURL {
    /// `stun:host[:port]` -> `stun://host:port` (webrtcbin's form).
    static func stunServer(_ url: String) -> String? {
        guard url.lowercased().hasPrefix("stun:") else { return nil }
        let rest = url.dropFirst(5).drop { $0 == "/" }
        guard !rest.isEmpty else { return nil }
        let hostPort = rest.split(separator: "?").first.map(String.init) ?? String(rest)
        return "stun://" + withDefaultPort(hostPort, 3478)
    }

    /// `turn:host[:port][?transport=x]` / `turns:...` with credentials -> `turn(s)://user:pass@host:port[?transport=x]`.
    static func turnServer(_ url: String, username: String, credential: String) -> String? {
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("turns:") {
            scheme = "turns"
        } else if lower.hasPrefix("turn:") {
            scheme = "turn"
        } else {
            return nil
        }
        let rest = url.dropFirst(scheme.count + 1).drop { $0 == "/" }
        let parts = rest.split(separator: "?", maxSplits: 1)
        guard let hostPort = parts.first, !hostPort.isEmpty else { return nil }
        let query = parts.count > 1 ? "?" + parts[1] : ""
        let user = escape(username)
        let pass = escape(credential)
        return "\(scheme)://\(user):\(pass)@\(withDefaultPort(String(hostPort), scheme == "turns" ? 5349 : 3478))\(query)"
    }

    private static func withDefaultPort(_ hostPort: String, _ port: Int) -> String {
        if hostPort.hasPrefix("[") { return hostPort.contains("]:") ? hostPort : "\(hostPort):\(port)" }
        return hostPort.contains(":") ? hostPort : "\(hostPort):\(port)"
    }

    private static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

extension MediaDirection {
    var cDirection: Int32 {
        switch self {
        case .inactive: return Int32(CGW_DIRECTION_INACTIVE)
        case .sendonly: return Int32(CGW_DIRECTION_SENDONLY)
        case .recvonly: return Int32(CGW_DIRECTION_RECVONLY)
        case .sendrecv: return Int32(CGW_DIRECTION_SENDRECV)
        }
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }

    var milliseconds: Int { Int(nanoseconds / 1_000_000) }
}

// MARK: - C callbacks (file-scope functions; context is a retained CoreReference)

private func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

private func onLocalCandidate(_ context: UnsafeMutableRawPointer?, _ mline: UInt32, _ candidate: UnsafePointer<CChar>?) {
    coreFrom(context)?.localCandidate(mline: mline, candidate: string(candidate) ?? "")
}

private func onICEConnectionState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.iceConnectionState(state)
}

private func onPeerConnectionState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.peerConnectionState(state)
}

private func onGatheringState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.gatheringState(state)
}

private func onDTLSState(_ context: UnsafeMutableRawPointer?, _ state: Int32) {
    coreFrom(context)?.dtlsState(state)
}

private func onNegotiationNeeded(_ context: UnsafeMutableRawPointer?) {
    coreFrom(context)?.negotiationNeeded()
}

private func onPadAdded(
    _ context: UnsafeMutableRawPointer?, _ pad: OpaquePointer?, _ media: UnsafePointer<CChar>?,
    _ encoding: UnsafePointer<CChar>?
) {
    guard let pad else { return }
    coreFrom(context)?.padAdded(pad: pad, media: string(media) ?? "", encoding: string(encoding) ?? "")
}

private func onBusMessage(
    _ context: UnsafeMutableRawPointer?, _ kind: Int32, _ source: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?
) {
    coreFrom(context)?.busMessage(kind: kind, source: string(source) ?? "", text: string(text) ?? "")
}

private func onWatchdogTick(_ context: UnsafeMutableRawPointer?) -> Bool {
    coreFrom(context)?.watchdogTick() ?? false
}

private func onRemoteOfferSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.remoteOfferSet(error: string(error))
}

private func onRemoteAnswerSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.remoteAnswerSet(error: string(error))
}

private func onLocalDescriptionCreated(
    _ context: UnsafeMutableRawPointer?, _ sdp: UnsafePointer<CChar>?, _ error: UnsafePointer<CChar>?
) {
    coreFrom(context)?.localDescriptionCreated(sdp: string(sdp), error: string(error))
}

private func onLocalDescriptionSet(_ context: UnsafeMutableRawPointer?, _ error: UnsafePointer<CChar>?) {
    coreFrom(context)?.localDescriptionSet(error: string(error))
}

private func onVideoFrame(
    _ context: UnsafeMutableRawPointer?, _ sample: OpaquePointer?, _ luma: UnsafePointer<UInt8>?, _ width: Int32,
    _ height: Int32, _ stride: Int32, _ pts: Int64, _ arrival: Int64
) {
    coreFrom(context)?.videoFrame(
        sample: sample, luma: luma, width: width, height: height, stride: stride, pts: pts, arrival: arrival)
}

private func onKeyUnitRequested(_ context: UnsafeMutableRawPointer?) {
    guard let core = coreFrom(context), !core.currentState.isFinal else { return }
    core.events.keyFrameRequested?()
}

private func onReceivedAccessUnit(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int, _ pts: Int64, _ key: Bool
) {
    coreFrom(context)?.receivedAccessUnit(isKeyFrame: key)
}

private func onAudioSample(_ context: UnsafeMutableRawPointer?) {
    coreFrom(context)?.count { $0.audioBuffersReceived += 1 }
}

private func onVideoPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes, media: "video")
}

private func onAudioPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes, media: "audio")
}

private func onOtherPackets(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtpPackets: Int(buffers), rtpBytes: bytes)
}

private func onRTCPReceived(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.heardFromPeer(rtcpReports: Int(buffers))
}

private func onEncodedVideo(_ context: UnsafeMutableRawPointer?, _ buffers: UInt32, _ bytes: Int, _ keys: UInt32) {
    coreFrom(context)?.count {
        $0.videoFramesSent += Int(buffers)
        $0.videoKeyFramesSent += Int(keys)
    }
}


