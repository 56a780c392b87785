// Where a link core is: its own life, the signalling exchange, and what its watchdog has attached to
// webrtcbin, and every other field of the core that changes after init. Plain values behind the
// core's Mutex; webrtcbin's own state numbers are named in PeerCore+States.swift.

/// The core's life. It only moves forward: new -> starting -> playing, and to closed from any of them.
enum CorePhase: Sendable, Equatable {
    /// Made; `start()` not called yet.
    case new
    /// `start()` is building the pipeline, or failed to (its owner then closes the core).
    case starting
    /// The pipeline plays (webrtcbin has added its transport elements): negotiation may begin.
    case playing
    /// `close()` was called: teardown runs or ran, and every later call is refused or ignored.
    case closed
}

/// A candidate from the peer: its m-line index and its `candidate:...` line.
struct RemoteCandidate: Sendable {
    var mLineIndex: UInt32
    var line: String
}

/// The offer/answer exchange and the candidates both ways (PROTOCOL.md 4). Three parts that move
/// independently: our end of candidates may go out before or after the peer's description is set.
struct SignallingProgress: Sendable {
    /// The offerer asks webrtcbin for one offer, the first time it needs negotiation once playing
    /// and its data channels exist.
    enum Offer: Sendable {
        /// Until `start` has made the data channels: webrtcbin asks for negotiation as soon as it
        /// plays, and an offer made then lacks the channels' m=application (seen under load).
        case held
        case notRequested
        case requested
    }

    /// The peer's description (its offer, or its answer). Candidates that come before it wait here,
    /// in order, and are applied right after it.
    enum RemoteDescription: Sendable {
        case notSet(waitingCandidates: [RemoteCandidate])
        case set
    }

    /// Our candidates trickle until the end of candidates is sent (once); none goes out after it.
    enum LocalCandidates: Sendable {
        case trickling
        case ended
    }

    var offer = Offer.held
    /// Our description (offer or answer) between its creation and webrtcbin's reply to
    /// set-local-description: it goes to the peer only then. Sent earlier, the peer's reply could
    /// be set before our own description (seen at fleet scale: the app's set-remote-description of
    /// the answer queued ahead of its set-local-description of the offer, refused in state stable,
    /// and the device's link ended in ICE failed).
    var pendingLocalDescription: String?
    /// Our candidates (and the end of them) that came before our description went out: sent
    /// right after it, in order (LinkEvents: the description comes first).
    var candidatesBeforeDescription: [ICECandidate] = []
    var localDescriptionSent = false
    var remoteDescription = RemoteDescription.notSet(waitingCandidates: [])
    var localCandidates = LocalCandidates.trickling
}

/// What the watchdog attaches to webrtcbin once negotiation has made its transports. Each part is
/// tried again on every tick until it takes.
/// (Not Sendable: it holds the DTLS transport's C pointer; it lives only inside the core's Mutex.)
struct TransportHooks {
    enum Attempt: Sendable {
        case pending
        case attached
    }

    /// The watch on the DTLS transport's state, and the transport (a reference the core owns).
    enum DTLSWatch {
        case pending
        case attached(handler: UInt, transport: UnsafeMutableRawPointer)
    }

    /// Probes counting the RTCP reports that arrive from the peer.
    var rtcpCounter = Attempt.pending
    /// The RTCP interval of every RTP session (`LinkOptions.rtcpIntervalMs`).
    var rtcpInterval = Attempt.pending
    var dtls = DTLSWatch.pending
}

/// The core's mutable fields, all behind its one Mutex (`PeerCore.fields`). The GStreamer pointers
/// are owned references, valid from `start()` until the core's deinit.
struct CoreFields {
    var pipeline: OpaquePointer?
    var webrtc: OpaquePointer?
    var videoIn: OpaquePointer?
    /// The pad access units are pushed into on the caller's thread (`.h264AccessUnits`; then
    /// there is no "videoin" appsrc).
    var videoPad: OpaquePointer?
    /// The pad the process's shared tone is pushed into (`SharedAudioTone`), and its subscription.
    var audioPad: OpaquePointer?
    var toneSubscription: Int?
    var receiveBins: [OpaquePointer] = []
    /// The H.264 receive branch built before the first packet, until that packet's pad takes it
    /// (also in `receiveBins`, which owns the reference).
    var prebuiltVideoBranch: OpaquePointer?
    var latestSample: OpaquePointer?
    var receivedVideoPad: OpaquePointer?

    var webrtcHandlers: [UInt] = []
    var busWatch: UInt32 = 0
    var watchdog: UInt32 = 0

    // Where the core is, and the link state it reports.
    var phase = CorePhase.new
    var signalling = SignallingProgress()
    var hooks = TransportHooks()
    var state: LinkState = .new

    var stalledRestarts = 0
    var lastPeerPacketUptime: UInt64 = 0
    var statistics = LinkStatistics()
    var ptsOffset: Int64?
    var lastPushedPts: Int64 = -1
    var frameDurationNanos: Int64 = 33_333_333
    var lastAccessUnitUnixNanos: Int64 = 0

    /// Receive bins with guarded output branches (entry element names), finished before teardown.
    var outputBranches: [(bin: OpaquePointer, entry: String)] = []
    /// The child processes drawing windows (`display: window`), finished once the pipeline stopped.
    var windows: [WindowProcess] = []
    /// PROTOCOL.md 8.6: the peer's audio plays on the speaker only while this is true.
    var speakerOn = true
    var outputFailuresReported: Set<String> = []
}
