// The part both roles share: one pipeline with one webrtcbin, its signals, ICE candidates both
// ways, the link state (PROTOCOL.md section 4: lost on ICE disconnected/failed, DTLS closed, or 5 s
// of silence), receive branches, counters, and teardown.
//
// This file: the core's fields, start (pipeline, ICE settings, transceivers, signals) and close.
// Beside it: PeerCore+Phases (its state values), +Negotiation (descriptions and candidates),
// +States (webrtcbin's states, the link state, the watchdog), +Media (receive branches, sending,
// key frames, snapshots), +Statistics (counters), +Callbacks (the functions C calls).
//
// Threads: C calls the file-scope functions of PeerCore+Callbacks.swift from GStreamer's threads
// and from the shared loop thread; every mutable field is in `fields` (one Mutex), and user
// callbacks are called with it released.
import CGstWebRTC
import Dispatch
import Foundation
import Synchronization

/// How the core starts negotiating once its pipeline plays.
enum Negotiation: Sendable {
    /// Set this remote offer, create and report the answer.
    case answer(offer: String)
    /// The answerer's pipeline is built before its offer comes (`PreparedAnswerer`): nothing is
    /// negotiated until `answer(offer:directions:iceServers:relayOnly:)`.
    case answerLater
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

/// The fields below without `private` are shared by the core's files (PeerCore*.swift); nothing
/// else in the module touches them.
final class PeerCore: Sendable {
    let options: LinkOptions
    let events: LinkEvents
    let negotiation: Negotiation
    /// Everything that changes after init (PeerCore+Phases.swift: `CoreFields`).
    let fields = Mutex(CoreFields())
    /// Pushed video held until the link connects; its lock keeps a link's pushes in order.
    let heldVideo = Mutex(HeldVideo())

    /// Applied to the local description webrtcbin creates, before it is reported and set.
    let editLocalDescription: @Sendable (String) -> String

    /// Received H.264 is decoded; false: only depayloaded and counted.
    let decodesVideo: Bool
    /// Where received video and audio go besides being counted (ReceiveOutputs.swift).
    let devices: LocalMediaDevices

    /// Data channels the offerer creates before its offer (so that it has an m=application line).
    private let dataChannelLabels: [String]
    /// The peer's H.264 video is expected: its receive branch may be built before the first packet.
    let preparesVideoReceive: Bool

    init(
        options: LinkOptions, events: LinkEvents, negotiation: Negotiation, decodesVideo: Bool = true,
        devices: LocalMediaDevices = LocalMediaDevices(),
        dataChannelLabels: [String] = [],
        preparesVideoReceive: Bool = false,
        editLocalDescription: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.preparesVideoReceive = preparesVideoReceive
        self.devices = devices
        self.dataChannelLabels = dataChannelLabels
        self.decodesVideo = decodesVideo
        self.options = options
        self.events = events
        self.negotiation = negotiation
        self.editLocalDescription = editLocalDescription
    }

    deinit {
        // Copied out: GStreamer is called with the Mutex released.
        let f = fields.withLock { $0 }
        if let latestSample = f.latestSample { cgw_sample_unref(latestSample) }
        if let receivedVideoPad = f.receivedVideoPad { cgw_pad_unref(receivedVideoPad) }
        if case .attached(_, let transport) = f.hooks.dtls { cgw_object_unref(transport) }
        for bin in f.receiveBins { cgw_element_unref(bin) }
        if let videoIn = f.videoIn { cgw_element_unref(videoIn) }
        for pad in [f.videoPad, f.audioPad].compactMap({ $0 }) {
            cgw_pusher_detach(pad)
            cgw_pad_unref(pad)
        }
        if let webrtc = f.webrtc { cgw_element_unref(webrtc) }
        if let pipeline = f.pipeline {
            cgw_pipeline_stop(pipeline)
            cgw_element_unref(pipeline)
        }
        for window in f.windows { window.finish() }
    }

    // MARK: Start

    /// Builds the pipeline, applies transceiver settings, plays, and starts negotiating.
    /// With `pushedVideoCaps` (RTP caps), access units are sent (`pushVideoBuffer`) as RTP packets
    /// straight into webrtcbin's sink pad, in place of `PipelineDescriptions.pushedVideoElement`,
    /// on the pushing thread (`PeerCore+PushedVideo.swift`). With
    /// `sendsSharedTone`, the process's `SharedAudioTone` is pushed into "audiopay".
    func start(
        description: String, transceivers: [TransceiverSetup], frameRate: Int?, pushedVideoCaps: String? = nil,
        sendsSharedTone: Bool = false
    ) throws(WebRTCLinkError) {
        try GStreamerRuntime.start()
        let refusal: WebRTCLinkError? = fields.withLock { f in
            switch f.phase {
            case .new:
                f.phase = .starting
                if let frameRate, frameRate > 0 { f.frameDurationNanos = 1_000_000_000 / Int64(frameRate) }
                return nil
            case .starting, .playing: return .wrongLifecycleStep("start() called twice")
            case .closed: return .closed
            }
        }
        if let refusal { throw refusal }

        var error: UnsafeMutablePointer<CChar>?
        guard let pipeline = cgw_pipeline_new_from_description(description, &error) else {
            throw .pipeline(takeCString(error))
        }
        guard let webrtc = cgw_bin_get_child(pipeline, "webrtc") else {
            cgw_element_unref(pipeline)
            throw .pipeline("no webrtcbin in the pipeline")
        }
        let videoIn = cgw_bin_get_child(pipeline, "videoin")
        var videoPad: OpaquePointer?
        if let pushedVideoCaps {
            videoPad = cgw_rtp_pusher_attach(pipeline, PipelineDescriptions.pushedVideoElement, pushedVideoCaps, nil, &error)
            if videoPad == nil {
                if let videoIn { cgw_element_unref(videoIn) }
                cgw_element_unref(webrtc)
                cgw_element_unref(pipeline)
                throw .pipeline(takeCString(error))
            }
        }
        var audioPad: OpaquePointer?
        if sendsSharedTone {
            audioPad = cgw_pusher_attach(pipeline, "audiopay", SharedAudioTone.caps, &error)
            if audioPad == nil {
                if let videoPad {
                    cgw_pusher_detach(videoPad)
                    cgw_pad_unref(videoPad)
                }
                if let videoIn { cgw_element_unref(videoIn) }
                cgw_element_unref(webrtc)
                cgw_element_unref(pipeline)
                throw .pipeline(takeCString(error))
            }
        }
        let refs = (pipeline: GstRef(pipeline), webrtc: GstRef(webrtc), videoIn: videoIn.map(GstRef.init),
                    videoPad: videoPad.map(GstRef.init), audioPad: audioPad.map(GstRef.init))
        fields.withLock { f in
            f.pipeline = refs.pipeline.pointer
            f.webrtc = refs.webrtc.pointer
            f.videoIn = refs.videoIn?.pointer
            f.videoPad = refs.videoPad?.pointer
            f.audioPad = refs.audioPad?.pointer
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
        // No sender here sets a priority (DSCP stays 0), so webrtcbin's ToS events only made its
        // bundle funnel re-send them at every audio/video switch (cgw_bundle_events.c).
        _ = cgw_webrtc_drop_tos_events(webrtc)
        try prebuildVideoReceiveBranch(pipeline: pipeline)

        // Frames sent: counted where the link's access units leave their maker (its encoder), or
        // as a pushed link sends each unit's packets (`PeerCore+PushedVideo.swift`).
        if videoPad == nil, let encoded = cgw_bin_get_child(pipeline, "videoencoded") {
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
        if let videoPad, events.keyFrameRequested != nil {
            _ = cgw_pad_on_key_unit_request(videoPad, onKeyUnitRequested, CoreReference.retained(self), releaseCoreReference)
        }

        transition(to: .connecting)
        guard cgw_pipeline_play(pipeline) else {
            throw .pipeline("the pipeline refused to play (a missing element or device?)")
        }
        fields.withLock { f in if f.phase == .starting { f.phase = .playing } }
        if sendsSharedTone {
            switch SharedAudioTone.pcma.subscribe({ [weak self] bytes, _ in self?.pushAudioBuffer(bytes) }) {
            case .success(let id):
                let closed: Bool = fields.withLock { f in
                    guard f.phase != .closed else { return true }
                    f.toneSubscription = id
                    return false
                }
                if closed { SharedAudioTone.pcma.unsubscribe(id) }
            case .failure(let problem): throw problem
            }
        }
        if let report = events.dataChannel {
            for label in dataChannelLabels {
                guard let channel = cgw_webrtc_create_data_channel(webrtc, label, true) else {
                    throw .pipeline("webrtcbin could not create the data channel '\(label)' (no SCTP elements?)")
                }
                report(WebRTCDataChannel(taking: channel, label: label))
            }
        }
        // Negotiation starts only once everything plays (webrtcbin adds transport elements then)
        // and the data channels exist.
        fields.withLock { f in if case .held = f.signalling.offer { f.signalling.offer = .notRequested } }
        switch negotiation {
        case .offer:
            negotiationNeeded()
        case .answer(let offer):
            try setRemoteOffer(offer, webrtc: webrtc)
        case .answerLater:
            break
        }
    }

    private func configureICE(_ webrtc: OpaquePointer) throws(WebRTCLinkError) {
        guard cgw_webrtc_set_ice_protocols(webrtc, true, options.tcpCandidates) else {
            throw .pipeline("webrtcbin's ICE agent has no ice-udp/ice-tcp properties")
        }
        // No UPnP port mapping: WebRTC peers reach each other through host, STUN and TURN
        // candidates; libnice's IGD discovery would add a thread and LAN multicast to every link.
        guard cgw_webrtc_tune_ice_agent(webrtc, UInt32(clamping: max(1, options.icePacingMs)), false) else {
            throw .pipeline("webrtcbin's ICE agent has no stun-pacing-timer/upnp properties (not libnice?)")
        }
        // Where the agent is not libnice's or does not take the mode (another GStreamer), the link
        // keeps regular nomination: it works, only about two ICE pacing ticks slower to connect.
        if options.aggressiveNomination { _ = cgw_webrtc_nominate_aggressively(webrtc) }
        let addresses = options.localAddresses ?? GStreamerRuntime.localInterfaceAddresses()
        for address in addresses where !address.isEmpty {
            guard cgw_webrtc_add_local_address(webrtc, address) else {
                throw .pipeline("the ICE agent refused local address \(address)")
            }
        }
        if !decodesVideo {
            // A counted link (bench media's streams beyond the decoded sample) only counts and
            // checks sequence numbers and timestamps: no jitter buffer (a task and a timer thread
            // per stream, and a hand-off per packet).
            _ = cgw_webrtc_receive_without_jitterbuffers(webrtc)
        }
        if options.jitterBufferFastStartPackets > 0 {
            // Without it the first frame waits the whole jitter buffer latency (GStreamer < 1.18
            // has no such property: the link then works as before).
            _ = cgw_webrtc_set_jitterbuffer_fast_start(webrtc, UInt32(clamping: options.jitterBufferFastStartPackets),
                                                       options.jitterBufferStartsAfterQueuedEvents)
        }
        try applyICEServers(options.iceServers, relayOnly: options.relayOnly, webrtc: webrtc)
    }

    /// STUN and TURN servers, and relay-only ICE: set before the local description (gathering
    /// starts there), so a prepared answerer takes them from its offer.
    func applyICEServers(_ servers: [ICEServer], relayOnly: Bool, webrtc: OpaquePointer) throws(WebRTCLinkError) {
        if relayOnly, !cgw_webrtc_set_ice_transport_policy(webrtc, Int32(CGW_ICE_TRANSPORT_POLICY_RELAY)) {
            throw .pipeline("webrtcbin has no ice-transport-policy property, or refused relay")
        }
        var stunSet = false
        for server in servers {
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
        fields.withLock { f in
            f.webrtcHandlers = handlers
            f.busWatch = bus
            f.watchdog = timer
        }
    }

    // MARK: Close

    /// Stops everything and reports `.closed`. Idempotent. From a GStreamer thread (inside a
    /// callback) the teardown finishes on a private queue shortly after.
    func close() {
        let first: Bool = fields.withLock { f in
            switch f.phase {
            case .closed: return false
            case .new, .starting, .playing:
                f.phase = .closed
                return true
            }
        }
        guard first else { return }
        if cgw_current_thread_runs_gstreamer_callbacks() {
            teardownQueue.async { self.teardown() }
        } else {
            teardown()
        }
    }

    private func teardown() {
        let (pipeline, webrtc, handlers, dtls, bus, timer, appsrc, tone) = fields.withLock { f in
            defer { f.toneSubscription = nil }
            return (f.pipeline, f.webrtc, f.webrtcHandlers, f.hooks.dtls, f.busWatch, f.watchdog, f.videoIn, f.toneSubscription)
        }
        if let tone { SharedAudioTone.pcma.unsubscribe(tone) }

        cgw_shared_loop_remove_source(timer)
        cgw_shared_loop_remove_source(bus)
        if let webrtc { for handler in handlers { cgw_signal_disconnect(UnsafeMutableRawPointer(webrtc), handler) } }
        if case .attached(let handler, let transport) = dtls { cgw_signal_disconnect(transport, handler) }
        if let appsrc { cgw_appsrc_end_of_stream(appsrc) }
        // No end-of-stream down the pushed pads: nothing on the send path waits for one, and before
        // the answer webrtcbin's blocked sink pads would hold this thread.
        // A recording writes its index (the end-of-stream reaches its sink) before the pipeline stops.
        for (bin, entry) in fields.withLock({ $0.outputBranches }) where !cgw_output_failed(bin, entry) {
            if !cgw_output_finish(bin, entry, 3000) { events.outputProblem?("\(entry) did not finish within 3 s") }
        }
        if let pipeline { cgw_pipeline_stop(pipeline) }
        // Nothing writes to a window's pipe any more: its child may end now.
        for window in fields.withLock({ f in defer { f.windows = [] }; return f.windows }) { window.finish() }
        let report: Bool = fields.withLock { f in
            defer { f.state = .closed }
            return f.state != .closed
        }
        if report { events.stateChanged(.closed) }
    }

    /// webrtcbin and the pipeline, unless the core is closed (then nil: callbacks stop there).
    func liveWebRTC() -> OpaquePointer? { fields.withLock { $0.phase == .closed ? nil : $0.webrtc } }
    func livePipeline() -> OpaquePointer? { fields.withLock { $0.phase == .closed ? nil : $0.pipeline } }

    /// The candidate pair the ICE agent selected (nil before one is selected, or once closed).
    var selectedCandidatePair: ICECandidatePair? {
        guard let webrtc = liveWebRTC() else { return nil }
        var local = CgwCandidateInfo()
        var remote = CgwCandidateInfo()
        guard cgw_webrtc_selected_pair(webrtc, &local, &remote),
              let l = ICECandidatePair.Candidate(local), let r = ICECandidatePair.Candidate(remote)
        else { return nil }
        return ICECandidatePair(local: l, remote: r)
    }
}

extension ICECandidatePair.Candidate {
    /// From the C shim's copy of a libnice candidate; nil for a type this side does not know.
    init?(_ info: CgwCandidateInfo) {
        let type: ICECandidatePair.CandidateType
        switch Int(info.type) {
        case Int(CGW_CANDIDATE_HOST): type = .host
        case Int(CGW_CANDIDATE_SERVER_REFLEXIVE): type = .srflx
        case Int(CGW_CANDIDATE_PEER_REFLEXIVE): type = .prflx
        case Int(CGW_CANDIDATE_RELAYED): type = .relay
        default: return nil
        }
        let address = withUnsafeBytes(of: info.address) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.init(type: type, address: address, port: Int(info.port))
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
