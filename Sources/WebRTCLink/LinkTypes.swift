// Values the WebRTC link API takes and reports (PROTOCOL.md section 4). Plain Sendable values.
import IPCWire

/// A STUN or TURN server from the 302 offer's `token` list.
public struct ICEServer: Sendable, Hashable {
    /// `stun:host[:port]`, `turn:host[:port][?transport=udp|tcp]` or `turns:...`.
    public var urls: [String]
    public var username: String
    public var credential: String

    public init(urls: [String], username: String = "", credential: String = "") {
        self.urls = urls
        self.username = username
        self.credential = credential
    }
}

/// Size and rate of a video stream: the profile's stream format (one type for both).
public typealias VideoFormat = VideoStreamFormat

public enum AudioCodec: String, Sendable, Hashable {
    /// G.711 A-law, 8 kHz mono (static payload type 8).
    case pcma = "PCMA"
    /// Opus, 48 kHz.
    case opus = "OPUS"
}

/// Where the video the device sends comes from.
public enum VideoInput: Sendable, Hashable {
    /// A built-in moving test pattern (`videotestsrc`), encoded here. For tests.
    case testPattern
    /// I420 frames the caller pushes with `pushVideoFrame`, encoded here.
    case rawFrames
    /// H.264 Annex B access units the caller pushes with `pushH264AccessUnit`, sent as they are
    /// (no re-encode). They must already be constrained baseline without B-frames.
    case h264AccessUnits
    /// Frames as a camera captured them (`pushCapturedFrame`): decoded (MJPEG) or converted
    /// (YUYV, NV12), scaled to the stream's size, then encoded.
    case capturedFrames(CapturedFormat, width: Int, height: Int)
}

/// What a camera delivers when it is not I420 or H.264.
public enum CapturedFormat: String, Sendable, Hashable {
    case mjpeg
    case yuyv
    case nv12
    /// Planar 4:2:0 at a size other than the stream's (scaled here).
    case i420

    /// The appsrc caps for frames of this format at the capture size and rate.
    func caps(width: Int, height: Int, fps: Int) -> String {
        switch self {
        case .mjpeg: "image/jpeg,framerate=\(fps)/1"
        case .yuyv: "video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(fps)/1"
        case .nv12: "video/x-raw,format=NV12,width=\(width),height=\(height),framerate=\(fps)/1"
        case .i420: "video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(fps)/1"
        }
    }

    /// The bytes one frame must have (nil: variable, as for JPEG).
    func frameSize(width: Int, height: Int) -> Int? {
        switch self {
        case .mjpeg: nil
        case .yuyv: width * height * 2
        case .nv12, .i420: width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        }
    }
}

/// Which H.264 encoder encodes `testPattern` and `rawFrames`.
public enum H264EncoderChoice: Sendable, Hashable {
    /// `v4l2h264enc` when this machine has it (a Raspberry Pi), otherwise x264.
    case automatic
    /// `x264enc` (software).
    case software
    /// `v4l2h264enc` (the Pi's hardware encoder).
    case hardware
}

/// What the device (answerer) sends.
public struct SendMedia: Sendable, Hashable {
    public var video: VideoFormat
    public var videoInput: VideoInput
    public var encoder: H264EncoderChoice
    /// Target bit rate of the encoder, in kbit/s; nil picks one from the size and rate.
    public var videoBitrateKbps: Int?
    /// Longest gap between key frames the encoder makes on its own (besides the first one and
    /// one per PLI/FIR). Not used for pass-through.
    public var keyFrameIntervalSeconds: Int
    /// Send a test tone (PCMA if the offer has it, otherwise Opus).
    public var sendsAudio: Bool

    public init(
        video: VideoFormat, videoInput: VideoInput = .testPattern, encoder: H264EncoderChoice = .automatic,
        videoBitrateKbps: Int? = nil, keyFrameIntervalSeconds: Int = 2, sendsAudio: Bool = true
    ) {
        self.video = video
        self.videoInput = videoInput
        self.encoder = encoder
        self.videoBitrateKbps = videoBitrateKbps
        self.keyFrameIntervalSeconds = keyFrameIntervalSeconds
        self.sendsAudio = sendsAudio
    }
}

/// Settings both roles share.
public struct LinkOptions: Sendable, Hashable {
    public var iceServers: [ICEServer]
    /// Addresses to gather host candidates on. nil: every interface that is up, loopback included
    /// (PROTOCOL.md section 4: a peer on the same host can always connect). Tests pass
    /// `["127.0.0.1"]` to keep every packet on loopback.
    public var localAddresses: [String]?
    /// Neither RTP nor RTCP from the peer for this long once connected: lost.
    public var silenceTimeout: Duration
    /// Jitter buffer of the receive path, in ms.
    public var jitterBufferMs: Int
    /// The jitter buffer starts pushing once this many consecutive packets have arrived, instead
    /// of holding the first packet for the whole `jitterBufferMs` (rtpjitterbuffer's
    /// `faststart-min-packets`); later packets still get `jitterBufferMs` to be reordered.
    /// 0: wait the whole latency, GStreamer's default. A 720p key frame is tens of packets, so 2
    /// starts the picture as soon as it arrives.
    public var jitterBufferFastStartPackets: Int
    /// Each jitter buffer lets its first packet in only once the stream's start events queued ahead
    /// of it have left (at most its latency, once): GStreamer 1.22 checks the fast start above only
    /// as packets arrive with a packet at the head of its queue, so a whole first frame that arrives
    /// before the buffer's thread has pushed those events otherwise waits the whole latency
    /// (docs/webrtc.md, "First frame, fifth pass"). Only with `jitterBufferFastStartPackets` > 0.
    public var jitterBufferStartsAfterQueuedEvents: Bool
    /// Each RTP session sends RTCP at least this often (ms), so that a receive-only peer is never
    /// silent for as long as `silenceTimeout`.
    public var rtcpIntervalMs: Int

    /// Also gather ICE-TCP host candidates (RFC 6544). Off by default: UDP host, STUN and TURN
    /// candidates are what the app uses, and TCP pairs on one host made links flaky here.
    public var tcpCandidates: Bool

    /// ICE pacing timer Ta in ms: one connectivity check per tick. libnice's default is 20 ms, and
    /// a link needs about three ticks (a check, a second pair, the nomination), so this is most of
    /// the time from the answer to the first frame on a LAN. RFC 8445 (14.2) allows 5 ms.
    public var icePacingMs: Int

    /// Relay-only ICE (webrtcbin's `ice-transport-policy` relay): only candidates allocated on a
    /// TURN server of `iceServers` are used, so every packet goes through the relay (PROTOCOL.md
    /// 9.4: the app is not on the device's network). Without a TURN server that allocates, the
    /// link never connects.
    public var relayOnly: Bool

    /// ICE nomination when this side controls (the offerer): aggressive puts USE-CANDIDATE in every
    /// check (RFC 5245 8.1.1.2), so the first pair that answers is selected, one pacing tick after
    /// the remote candidates; regular (false, webrtcbin's own) checks first and nominates a valid
    /// pair on a later tick: three ticks. The app simulator's links use aggressive (docs/webrtc.md,
    /// "First frame, fifth pass"); an answerer is controlled and ignores it.
    public var aggressiveNomination: Bool

    public init(
        iceServers: [ICEServer] = [], localAddresses: [String]? = nil, silenceTimeout: Duration = .seconds(5),
        jitterBufferMs: Int = 100, rtcpIntervalMs: Int = 1000, tcpCandidates: Bool = false, icePacingMs: Int = 5,
        relayOnly: Bool = false, jitterBufferFastStartPackets: Int = 2, aggressiveNomination: Bool = false,
        jitterBufferStartsAfterQueuedEvents: Bool = true
    ) {
        self.jitterBufferStartsAfterQueuedEvents = jitterBufferStartsAfterQueuedEvents
        self.relayOnly = relayOnly
        self.aggressiveNomination = aggressiveNomination
        self.jitterBufferFastStartPackets = jitterBufferFastStartPackets
        self.icePacingMs = icePacingMs
        self.iceServers = iceServers
        self.localAddresses = localAddresses
        self.tcpCandidates = tcpCandidates
        self.silenceTimeout = silenceTimeout
        self.jitterBufferMs = jitterBufferMs
        self.rtcpIntervalMs = rtcpIntervalMs
    }
}

/// The candidate pair the ICE agent selected for the link's media: the proof of which path the
/// packets take (a `relay` local candidate: through the TURN server).
public struct ICECandidatePair: Sendable, Hashable, CustomStringConvertible {
    public enum CandidateType: String, Sendable, Hashable {
        case host
        /// Server reflexive (a STUN server's view of the address).
        case srflx
        /// Peer reflexive (learned from a connectivity check).
        case prflx
        /// Relayed: an address allocated on a TURN server.
        case relay
    }

    public struct Candidate: Sendable, Hashable {
        public var type: CandidateType
        public var address: String
        public var port: Int

        public init(type: CandidateType, address: String, port: Int) {
            self.type = type
            self.address = address
            self.port = port
        }
    }

    public var local: Candidate
    public var remote: Candidate

    public init(local: Candidate, remote: Candidate) {
        self.local = local
        self.remote = remote
    }

    /// `local relay 127.0.0.1:50123 -> remote host 127.0.0.1:40111`.
    public var description: String {
        "local \(local.type.rawValue) \(local.address):\(local.port) -> remote \(remote.type.rawValue) \(remote.address):\(remote.port)"
    }
}

/// A local ICE candidate to send to the peer in a 302 `candidate` message.
public struct ICECandidate: Sendable, Hashable {
    /// As webrtcbin gives it: `candidate:...` (no `a=`, no CRLF). Empty: end of candidates.
    public var candidate: String
    public var sdpMLineIndex: Int

    public init(candidate: String, sdpMLineIndex: Int) {
        self.candidate = candidate
        self.sdpMLineIndex = sdpMLineIndex
    }

    public var isEndOfCandidates: Bool { candidate.isEmpty }

    /// The form the 302 `candidate.msg.candidate` field carries: `a=candidate:...\r\n`, or "" at the end.
    public var attributeLine: String { candidate.isEmpty ? "" : "a=\(candidate)\r\n" }

    /// Accepts `a=candidate:...`, `candidate:...`, with or without trailing CRLF/whitespace.
    /// Returns "" for an empty line (end of candidates).
    public static func normalizedLine(_ line: String) -> String {
        var text = Substring(line)
        while let last = text.last, last.isWhitespace || last.isNewline { text = text.dropLast() }
        while let first = text.first, first.isWhitespace || first.isNewline { text = text.dropFirst() }
        if text.hasPrefix("a=") { text = text.dropFirst(2) }
        return String(text)
    }
}

/// Why a link counts as lost (PROTOCOL.md section 4: ICE disconnected or failed, DTLS closed, or
/// nothing from the peer for 5 s), or never came up.
public enum LinkLossReason: Sendable, Hashable {
    case iceDisconnected
    case iceFailed
    case dtlsClosed
    case dtlsFailed
    case connectionFailed
    /// Nothing (RTP, RTCP or anything else) came from the peer for `LinkOptions.silenceTimeout`.
    case peerSilent
    /// Offer/answer could not be applied or created.
    case negotiationFailed(String)
    /// A GStreamer element failed (the text is GStreamer's message).
    case pipelineError(String)
}

/// The link's life: new -> connecting -> connected -> lost | closed. `lost` and `closed` are final;
/// `lost` may also follow `connecting` directly (negotiation or ICE failed).
public enum LinkState: Sendable, Hashable {
    case new
    case connecting
    case connected
    case lost(LinkLossReason)
    case closed

    public var isFinal: Bool {
        switch self {
        case .lost, .closed: return true
        case .new, .connecting, .connected: return false
        }
    }
}

/// A decoded video frame handed to `LinkEvents.videoFrame`: its luma (Y) plane, copied.
public struct DecodedVideoFrame: Sendable {
    /// `stride * height` bytes; row r starts at `r * stride`.
    public var luma: [UInt8]
    public var width: Int
    public var height: Int
    public var stride: Int
    /// When the frame left the decoder, unix time in ns (the clock of the latency stamp).
    public var arrivalUnixNanos: Int64
    /// Its presentation timestamp in the receiving pipeline (ns), or -1.
    public var ptsNanos: Int64

    public init(luma: [UInt8], width: Int, height: Int, stride: Int, arrivalUnixNanos: Int64, ptsNanos: Int64) {
        self.luma = luma
        self.width = width
        self.height = height
        self.stride = stride
        self.arrivalUnixNanos = arrivalUnixNanos
        self.ptsNanos = ptsNanos
    }
}

/// Counters of one link. Read with `stats` at any time; they only grow.
public struct LinkStatistics: Sendable, Hashable {
    /// Encoded (or passed-through) video access units handed to the RTP payloader.
    public var videoFramesSent = 0
    /// Of those, key frames (IDR): one at start and one per PLI/FIR from the peer.
    public var videoKeyFramesSent = 0
    /// Video frames received and decoded.
    public var videoFramesReceived = 0
    /// Count-only receive path (`OfferConfiguration.decodesVideo` false): access units
    /// depayloaded, of which key frames; when the first and the last came (unix ns, 0 before);
    /// the longest time between two (ms).
    public var videoAccessUnitsReceived = 0
    public var videoKeyFramesReceived = 0
    public var firstAccessUnitUnixNanos: Int64 = 0
    public var lastAccessUnitUnixNanos: Int64 = 0
    public var longestAccessUnitGapMs = 0
    /// Count-only receive path: the RTP sequence check of the video (no jitter buffer before it):
    /// packets the sequence numbers skipped over (lost), in how many gaps, and packets that came
    /// behind one already seen (reordered or repeated).
    public var videoPacketsMissing = 0
    public var videoSequenceGaps = 0
    public var videoPacketsLate = 0
    /// Count-only receive path: how far the video's RTP timestamp (90 kHz) moved from the first
    /// access unit to the last, summed step by step: at F frames/s the sender made `span * F /
    /// 90,000` frames after the first one counted, so the access units counted short of that are
    /// frames it skipped (or that were lost whole).
    public var videoTimestampSpan = 0
    /// Size of the last decoded frame (0 before the first).
    public var receivedVideoWidth = 0
    public var receivedVideoHeight = 0
    /// RTP packets received per medium (after SRTP).
    public var videoPacketsReceived = 0
    public var audioPacketsReceived = 0
    /// Decoded audio buffers received.
    public var audioBuffersReceived = 0
    /// Bytes of those RTP packets (payload and RTP header).
    public var rtpBytesReceived = 0
    /// RTCP reports (SR/RR) received from the peer: a receive-only peer still sends these.
    public var rtcpReportsReceived = 0
    /// Times a stalled receive path inside webrtcbin was restarted (see
    /// `cgw_webrtc_restart_stalled_receivers`); 0 on a healthy link.
    public var stalledReceiverRestarts = 0

    public init() {}
}

public enum WebRTCLinkError: Error, Sendable, Hashable {
    /// gst_init failed or a needed element is missing (the text says which).
    case gstreamerUnavailable(String)
    /// The offer is not SDP or has no medium this link can answer.
    case invalidOffer(String)
    /// The offer has no H.264 with packetization-mode 1.
    case noCompatibleVideoCodec
    case invalidAnswer(String)
    case pipeline(String)
    /// `start()` was called twice, or an operation came before `start()`.
    case wrongLifecycleStep(String)
    case closed
    /// `pushVideoFrame`: the frame's size is not the configured one, or its byte count is wrong.
    case frameMismatch(String)
    case snapshotUnavailable(String)
}
