// The app's side of the media link (the app simulator, `ipcemu app`): offers to receive the
// device's video and audio, optionally sends its own test pattern (two-way calls), decodes what
// arrives and hands each frame's luma to a callback (for the latency stamp reader).

public struct OfferConfiguration: Sendable, Hashable {
    /// Audio codecs offered, in order of preference (the device picks PCMA if offered).
    public var audioCodecs: [AudioCodec]
    /// Two-way: the video m-line is sendrecv and carries this test pattern to the device.
    public var sendsVideo: VideoFormat?
    /// Payload type of the offered H.264.
    public var videoPayloadType: Int
    /// Decode the received video (frames reach `LinkEvents.videoFrame`). false: access units are
    /// only counted, at the RTP level (`LinkStatistics.videoAccessUnitsReceived` and
    /// `videoKeyFramesReceived`; no depayloader, no queue), and the audio is counted at its pad and
    /// dropped (no `audioBuffersReceived`): what a benchmark with many streams on one machine can
    /// afford.
    public var decodesVideo: Bool
    /// With `sendsVideo`: the caller pushes each I420 frame (`WebRTCOfferer.pushVideoFrame`, e.g.
    /// the stamped test pattern of PROTOCOL.md 6) instead of GStreamer's own moving pattern.
    public var sendsPushedFrames: Bool
    /// The audio m-line is sendrecv and carries a 440 Hz tone in the first of `audioCodecs`
    /// (two-way: the caller's voice, which a device may play on its speaker).
    public var sendsAudio: Bool
    /// Offer an RTP video m-line (false: audio and data channels only, as an app that takes the
    /// device's HEVC over `fmp4Stream` may do; PROTOCOL.md 7).
    public var receivesRTPVideo: Bool
    /// Data channels to open (ordered), each reported through `LinkEvents.dataChannel`; the offer
    /// then has an `m=application ... webrtc-datachannel` section.
    public var dataChannels: [String]

    public init(
        audioCodecs: [AudioCodec] = [.pcma, .opus], sendsVideo: VideoFormat? = nil, videoPayloadType: Int = 96,
        decodesVideo: Bool = true, sendsPushedFrames: Bool = false, sendsAudio: Bool = false,
        receivesRTPVideo: Bool = true, dataChannels: [String] = []
    ) {
        self.sendsPushedFrames = sendsPushedFrames
        self.sendsAudio = sendsAudio
        self.receivesRTPVideo = receivesRTPVideo
        self.dataChannels = dataChannels
        self.audioCodecs = audioCodecs
        self.sendsVideo = sendsVideo
        self.videoPayloadType = videoPayloadType
        self.decodesVideo = decodesVideo
    }
}

/// The app simulator's WebRTC peer.
///
/// Lifecycle: `init` -> `start()` (`events.localDescription` gets the offer, then candidates
/// trickle) -> `setRemoteAnswer(_:)` and `addRemoteCandidate` -> `.connected`, frames arrive in
/// `events.videoFrame` -> `close()` (idempotent; also on deinit).
public final class WebRTCOfferer: Sendable {
    public let configuration: OfferConfiguration
    private let core: PeerCore
    /// The options the link was made with (its webrtcbin, ICE agent and receive branches follow them).
    public var options: LinkOptions { core.options }

    public init(configuration: OfferConfiguration = OfferConfiguration(), options: LinkOptions = LinkOptions(), events: LinkEvents) {
        self.configuration = configuration
        let pt = configuration.videoPayloadType
        core = PeerCore(options: options, events: events, negotiation: .offer, decodesVideo: configuration.decodesVideo,
                        dataChannelLabels: configuration.dataChannels,
                        preparesVideoReceive: configuration.receivesRTPVideo) { offer in
            // When the app sends video too, its transceiver's caps cannot name a profile-level-id
            // (x264's SPS says 42c0xx and webrtcbin would refuse the stream): state it here.
            SDPEditing.settingH264ProfileLevelID(in: offer, payloadType: pt, profileLevelID: "42e01f")
        }
    }

    deinit { core.close() }

    public func start() throws(WebRTCLinkError) {
        var parts = [PipelineDescriptions.webrtcbin(options: core.options)]
        var transceivers: [TransceiverSetup] = []
        let pt = configuration.videoPayloadType
        if let video = configuration.sendsVideo {
            try GStreamerRuntime.start()
            let media = SendMedia(
                video: video, videoInput: configuration.sendsPushedFrames ? .rawFrames : .testPattern, encoder: .software,
                sendsAudio: false)
            parts.append(PipelineDescriptions.videoSend(media: media, payloadType: pt, encoderFactory: "x264enc"))
            transceivers.append(TransceiverSetup(
                target: .existing(0), direction: .sendrecv,
                caps: PipelineDescriptions.offerVideoCaps(payloadType: pt, statingProfile: false)))
        } else if configuration.receivesRTPVideo {
            transceivers.append(TransceiverSetup(
                target: .added, direction: .recvonly,
                caps: PipelineDescriptions.offerVideoCaps(payloadType: pt, statingProfile: true)))
        }
        if configuration.sendsAudio, let codec = configuration.audioCodecs.first {
            try GStreamerRuntime.start()
            parts.append(PipelineDescriptions.audioSend(codec: codec, payloadType: codec == .pcma ? 8 : 111))
            transceivers.append(TransceiverSetup(
                target: .existing(configuration.sendsVideo == nil ? 0 : 1), direction: .sendrecv,
                caps: PipelineDescriptions.offerAudioCaps(configuration.audioCodecs)))
        } else if !configuration.audioCodecs.isEmpty {
            transceivers.append(TransceiverSetup(
                target: .added, direction: .recvonly, caps: PipelineDescriptions.offerAudioCaps(configuration.audioCodecs)))
        }
        do {
            try core.start(
                description: parts.joined(separator: "  "), transceivers: transceivers,
                frameRate: configuration.sendsVideo?.fps)
        } catch {
            core.close()
            throw error
        }
    }

    /// Pushes one I420 frame of exactly `sendsVideo`'s size (`sendsPushedFrames`), laid out as
    /// `WebRTCAnswerer.pushVideoFrame` says. False when refused (wrong size, not started, closed).
    @discardableResult
    public func pushVideoFrame(_ bytes: [UInt8], width: Int, height: Int, ptsNanos: Int64) -> Bool {
        guard configuration.sendsPushedFrames, let video = configuration.sendsVideo, width == video.width,
              height == video.height, bytes.count == WebRTCAnswerer.i420Size(width: width, height: height)
        else { return false }
        return bytes.withUnsafeBytes { core.pushVideoBuffer($0, ptsNanos: ptsNanos, keyFrame: true) }
    }

    /// The device's answer SDP.
    public func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError) { try core.setRemoteAnswer(sdp) }

    /// A candidate from the device: `a=candidate:...\r\n` or `candidate:...`; "" (end) is ignored.
    public func addRemoteCandidate(_ line: String, sdpMLineIndex: Int = 0) {
        core.addRemoteCandidate(line, sdpMLineIndex: sdpMLineIndex)
    }

    /// Sends the device a key frame request (RTCP PLI/FIR); false before any video arrived.
    @discardableResult
    public func requestKeyFrame() -> Bool { core.requestKeyFrame() }

    public var state: LinkState { core.currentState }
    public var stats: LinkStatistics { core.stats }
    /// The ICE candidate pair the link's media uses (nil until ICE selected one): with
    /// `LinkOptions.relayOnly`, its local side is a `relay` candidate on the TURN server.
    public var selectedCandidatePair: ICECandidatePair? { core.selectedCandidatePair }
    /// The pipeline as a Graphviz graph (elements, states, caps), for debugging.
    public var pipelineGraph: String { core.pipelineGraph }

    /// The latest video frame received from the device, as JPEG.
    public func snapshotJPEG() throws(WebRTCLinkError) -> [UInt8] { try core.snapshotJPEG() }

    public func close() { core.close() }
}
