// The device's side of the media link (PROTOCOL.md section 4): answers the app's offer, sends
// H.264 constrained baseline video and a PCMA (or Opus) tone, receives and decodes what the app
// sends (a screen IPC shows the caller).

/// What the answerer will do with an offer, decided from the offer alone (no GStreamer).
public struct AnswerPlan: Sendable, Hashable {
    /// The offer's H.264 payload the device sends (packetization-mode 1, constrained baseline
    /// preferred); nil when the offer does not want video from the device.
    public var videoPayload: RTPPayloadFormat?
    /// Whether the app sends video too (two-way: the offer's video is sendrecv).
    public var receivesVideo: Bool
    public var audioCodec: AudioCodec?
    public var audioPayloadType: Int?
    public var receivesAudio: Bool

    /// The profile-level-id the answer states: the offer's when it is constrained baseline (42 with
    /// constraint_set1, e.g. 42e01f or 42c01f), else 42e01f.
    public var answerProfileLevelID: String {
        if let id = videoPayload?.profileLevelID, id.count == 6, id.hasPrefix("42"),
            let constraints = Int(id.dropFirst(2).prefix(2), radix: 16), constraints & 0x40 != 0
        {
            return id
        }
        return "42e01f"
    }

    /// A plan made without an offer (`PreparedAnswerer`'s guess): video sent and audio both ways.
    init(videoPayloadType: Int, audio: AudioCodec, audioPayloadType: Int) {
        videoPayload = RTPPayloadFormat(payloadType: videoPayloadType, encoding: "H264", clockRate: 90000, channels: nil,
                                        parameters: ["packetization-mode": "1"])
        receivesVideo = false
        audioCodec = audio
        self.audioPayloadType = audioPayloadType
        receivesAudio = true
    }

    /// Reads the offer. Throws `invalidOffer` for non-SDP or an offer with no audio or video, and
    /// `noCompatibleVideoCodec` when the app wants video but offers no H.264 packetization-mode 1.
    public init(offer: String, sendsAudio: Bool = true) throws(WebRTCLinkError) {
        let summary = try SessionDescriptionSummary(parsing: offer)
        let video = summary.firstSection(kind: "video")
        let audio = summary.firstSection(kind: "audio")
        guard video != nil || audio != nil else { throw .invalidOffer("the offer has no audio or video m= line") }
        if let video, video.direction.receives {
            guard let h264 = video.preferredH264 else { throw .noCompatibleVideoCodec }
            videoPayload = h264
        } else {
            videoPayload = nil
        }
        receivesVideo = video?.direction.sends ?? false
        receivesAudio = audio?.direction.sends ?? false
        if let audio, audio.direction.receives, sendsAudio {
            if let pcma = audio.payload(encoding: "PCMA") {
                audioCodec = .pcma
                audioPayloadType = pcma.payloadType
            } else if let opus = audio.payload(encoding: "OPUS") {
                audioCodec = .opus
                audioPayloadType = opus.payloadType
            } else {
                audioCodec = nil
                audioPayloadType = nil
            }
        } else {
            audioCodec = nil
            audioPayloadType = nil
        }
    }
}

/// The device's WebRTC peer.
///
/// Lifecycle: `init` (reads the offer, no I/O) -> `start()` (builds and plays the pipeline, sets
/// the offer; `events.localDescription` then gets the answer, `events.localCandidate` the trickled
/// candidates) -> `addRemoteCandidate` as the app's candidates arrive -> `events.stateChanged`
/// reports `.connected`, later `.lost(reason)` -> `close()` (idempotent; also on deinit).
public final class WebRTCAnswerer: Sendable {
    public let plan: AnswerPlan
    public let media: SendMedia
    /// The H.264 encoder element in use ("x264enc", "v4l2h264enc"), or nil for pass-through.
    public let encoderFactory: String?
    /// The device's screen and sound: where the app's video and audio go, where its voice comes from.
    public let devices: LocalMediaDevices
    private let core: PeerCore
    private let offer: String
    private let options: LinkOptions
    private let layout: PipelineLayout

    /// `prepared`: a pipeline built before the offer (a call rang); used when it is what this offer
    /// needs (same elements, payload types, options but ICE servers), else closed.
    public init(
        offer: String, media: SendMedia, options: LinkOptions = LinkOptions(), devices: LocalMediaDevices = LocalMediaDevices(),
        events: LinkEvents, prepared: PreparedAnswerer? = nil
    ) throws(WebRTCLinkError) {
        plan = try AnswerPlan(offer: offer, sendsAudio: media.sendsAudio)
        self.media = media
        self.offer = offer
        self.options = options
        self.devices = devices
        encoderFactory = try Self.encoderFactory(for: media)
        layout = PipelineLayout(plan: plan, media: media, devices: devices, options: options, encoderFactory: encoderFactory)
        let edit = Self.answerEdit(plan: plan, offer: offer)
        if let prepared, let core = prepared.take(for: layout, media: media, devices: devices, options: options,
                                                  events: events, edit: edit) {
            self.core = core
            usesPrepared = true
        } else {
            prepared?.close()
            core = PeerCore(options: options, events: events, negotiation: .answer(offer: offer), devices: devices,
                            editLocalDescription: edit)
            usesPrepared = false
        }
    }

    /// webrtcbin 1.22 leaves profile-level-id out of the answer's H.264 fmtp (the encoder's SPS
    /// says 42c0xx, the offer 42e0xx: both constrained baseline). State it.
    static func answerEdit(plan: AnswerPlan, offer: String) -> @Sendable (String) -> String {
        { created in
            let answer = SDPEditing.answeringAsDTLSServer(created, offer: offer)
            guard let video = plan.videoPayload else { return answer }
            return SDPEditing.settingH264ProfileLevelID(
                in: answer, payloadType: video.payloadType, profileLevelID: plan.answerProfileLevelID)
        }
    }

    deinit { core.close() }

    /// Builds the pipeline (or takes the prepared one) and starts answering. Throws if the pipeline
    /// cannot be built (a missing element) or webrtcbin cannot read the offer; the link is then closed.
    public func start() throws(WebRTCLinkError) {
        do {
            if usesPrepared {
                try core.answer(offer: offer, directions: layout.transceivers.map(\.direction),
                                iceServers: options.iceServers,
                                relayOnly: options.relayOnly)
            } else {
                if let problem = layout.audioProblem { core.events.outputProblem?(problem) }
                try core.start(
                    description: layout.description, transceivers: layout.transceivers, frameRate: media.video.fps,
                    pushedVideoCaps: layout.pushedVideoCaps, sendsSharedTone: layout.sendsSharedTone)
            }
        } catch {
            core.close()
            throw error
        }
    }

    /// Whether this link took a pipeline built before its offer (`PreparedAnswerer`).
    public let usesPrepared: Bool

    /// The pipeline an answer to `plan` needs: its gst-launch description and transceivers.
    struct PipelineLayout: Sendable {
        var description: String
        var transceivers: [TransceiverSetup]
        var audioProblem: String?
        /// Caps of the RTP packets pushed straight into webrtcbin (`.h264AccessUnits`).
        var pushedVideoCaps: String?
        /// The audio is the process's `SharedAudioTone`, pushed.
        var sendsSharedTone = false

        init(plan: AnswerPlan, media: SendMedia, devices: LocalMediaDevices, options: LinkOptions, encoderFactory: String?) {
            var parts = [PipelineDescriptions.webrtcbin(options: options)]
            var transceivers: [TransceiverSetup] = []
            if let video = plan.videoPayload {
                parts.append(PipelineDescriptions.videoSend(
                    media: media, payloadType: video.payloadType, encoderFactory: encoderFactory ?? "x264enc"))
                transceivers.append(TransceiverSetup(
                    target: .existing(transceivers.count), direction: plan.receivesVideo ? .sendrecv : .sendonly, caps: nil))
                if media.videoInput == .h264AccessUnits {
                    pushedVideoCaps = PipelineDescriptions.pushedRTPCaps(payloadType: video.payloadType)
                }
            }
            if let codec = plan.audioCodec, let pt = plan.audioPayloadType {
                let (source, problem) = OutputDescriptions.audioSource(devices.audioSource)
                audioProblem = problem
                if source == nil, codec == .pcma, media.videoInput == .h264AccessUnits {
                    // A device fed by a shared encoder: the tone is shared too.
                    sendsSharedTone = true
                    parts.append(PipelineDescriptions.sharedToneSend(payloadType: pt))
                } else {
                    parts.append(PipelineDescriptions.audioSend(codec: codec, payloadType: pt, source: source))
                }
                transceivers.append(TransceiverSetup(
                    target: .existing(transceivers.count), direction: plan.receivesAudio ? .sendrecv : .sendonly, caps: nil))
            }
            description = parts.joined(separator: "  ")
            self.transceivers = transceivers
        }

        /// Same elements and transceivers (directions are set at the offer).
        func builds(like other: PipelineLayout) -> Bool {
            description == other.description && transceivers.count == other.transceivers.count
                && pushedVideoCaps == other.pushedVideoCaps && sendsSharedTone == other.sendsSharedTone
        }
    }

    /// A candidate from the app: `a=candidate:...\r\n` or `candidate:...`; "" (end) is ignored.
    public func addRemoteCandidate(_ line: String, sdpMLineIndex: Int = 0) {
        core.addRemoteCandidate(line, sdpMLineIndex: sdpMLineIndex)
    }

    /// Pushes one I420 frame (`videoInput == .rawFrames`): planes Y, U, V back to back, each row
    /// padded to GStreamer's default stride (width rounded up to 4; chroma (width+1)/2 rounded up
    /// to 4), which for widths that are multiples of 8 is tightly packed. The PTS may be on any
    /// clock; only its spacing is kept. Returns false if the frame is refused (wrong size or byte
    /// count, not started, closed). When the encoder falls behind, the newest frames beyond a
    /// queue of 4 are dropped (true is still returned).
    @discardableResult
    public func pushVideoFrame(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, ptsNanos: Int64) -> Bool {
        guard media.videoInput == .rawFrames, width == media.video.width, height == media.video.height,
            bytes.count == Self.i420Size(width: width, height: height)
        else { return false }
        return core.pushVideoBuffer(bytes, ptsNanos: ptsNanos, keyFrame: true)
    }

    @discardableResult
    public func pushVideoFrame(_ bytes: [UInt8], width: Int, height: Int, ptsNanos: Int64) -> Bool {
        bytes.withUnsafeBytes { pushVideoFrame($0, width: width, height: height, ptsNanos: ptsNanos) }
    }

    /// Pushes one frame as the camera captured it (`videoInput == .capturedFrames`): a JPEG, or a
    /// YUYV / NV12 frame of exactly the capture size. Returns false for a frame that does not fit.
    @discardableResult
    public func pushCapturedFrame(_ bytes: [UInt8], ptsNanos: Int64) -> Bool {
        guard case .capturedFrames(let format, let width, let height) = media.videoInput, !bytes.isEmpty else { return false }
        if let size = format.frameSize(width: width, height: height), bytes.count != size { return false }
        return bytes.withUnsafeBytes { core.pushVideoBuffer($0, ptsNanos: ptsNanos, keyFrame: true) }
    }

    /// Pushes one H.264 access unit, Annex B byte stream (`videoInput == .h264AccessUnits`).
    @discardableResult
    public func pushH264AccessUnit(_ bytes: UnsafeRawBufferPointer, ptsNanos: Int64, isKeyFrame: Bool) -> Bool {
        guard media.videoInput == .h264AccessUnits, !bytes.isEmpty else { return false }
        return core.pushVideoBuffer(bytes, ptsNanos: ptsNanos, keyFrame: isKeyFrame)
    }

    /// The same, stamped with the pipeline's running time at the push (a shared encoder's access
    /// units: the link may switch between encoders whose clocks differ). With `packets` (the
    /// unit's RTP packets from its feed's one payloader) the link sends its copies of those;
    /// without, it makes its own.
    @discardableResult
    public func pushH264AccessUnit(_ bytes: UnsafeRawBufferPointer, isKeyFrame: Bool, packets: RTPPackets? = nil) -> Bool {
        guard media.videoInput == .h264AccessUnits, !bytes.isEmpty else { return false }
        return core.pushVideoBuffer(bytes, ptsNanos: nil, keyFrame: isKeyFrame, packets: packets)
    }

    @discardableResult
    public func pushH264AccessUnit(_ bytes: [UInt8], ptsNanos: Int64, isKeyFrame: Bool) -> Bool {
        bytes.withUnsafeBytes { pushH264AccessUnit($0, ptsNanos: ptsNanos, isKeyFrame: isKeyFrame) }
    }

    /// Byte count of one I420 frame in GStreamer's default layout.
    public static func i420Size(width: Int, height: Int) -> Int {
        let lumaStride = (width + 3) / 4 * 4
        let chromaStride = ((width + 1) / 2 + 3) / 4 * 4
        let evenHeight = (height + 1) / 2 * 2
        return lumaStride * evenHeight + 2 * chromaStride * (evenHeight / 2)
    }

    /// Asks the app for a key frame of the video it sends (two-way calls).
    @discardableResult
    public func requestKeyFrame() -> Bool { core.requestKeyFrame() }

    public var state: LinkState { core.currentState }
    public var stats: LinkStatistics { core.stats }
    /// The pipeline as a Graphviz graph (elements, states, caps), for debugging.
    public var pipelineGraph: String { core.pipelineGraph }
    /// Tests: counting the events that leave the bundle funnel (`PeerCore.countBundledEvents`).
    func countBundledEvents() -> Bool { core.countBundledEvents() }
    var bundledEvents: Int? { core.bundledEvents }

    /// The latest video frame received from the app, as JPEG. Throws before the first one.
    public func snapshotJPEG() throws(WebRTCLinkError) -> [UInt8] { try core.snapshotJPEG() }

    /// PROTOCOL.md 8.6 `speaker`: the app's audio plays on the device's speaker (the profile's
    /// `audio.playback`) only while on.
    public func setSpeaker(on: Bool) { core.setSpeaker(on: on) }
    public var isSpeakerOn: Bool { core.isSpeakerOn }

    /// Stops the pipeline and reports `.closed`. Idempotent. Synchronous, except from inside one of
    /// this link's callbacks, where the teardown completes just after.
    public func close() { core.close() }
}

extension WebRTCAnswerer {
    /// The encoder element for `media`: none when the input is already H.264 access units, else the
    /// Pi's hardware encoder when GStreamer has it, else x264 (the answerer and a prepared one alike).
    static func encoderFactory(for media: SendMedia) throws(WebRTCLinkError) -> String? {
        guard media.videoInput != .h264AccessUnits else { return nil }
        try GStreamerRuntime.start()
        return PipelineDescriptions.encoderFactory(for: media.encoder, hardwareAvailable: GStreamerRuntime.hasElement("v4l2h264enc"))
    }
}
