// What a link reports to its owner: its local description and candidates, state changes, frames,
// key frame requests, output problems and data channels.

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
    /// Steps of the first received video (where the first frame's time goes): each reported once.
    public var videoReceiveStep: (@Sendable (VideoReceiveStep) -> Void)?

    public init(
        localDescription: @escaping @Sendable (String) -> Void,
        localCandidate: @escaping @Sendable (ICECandidate) -> Void,
        stateChanged: @escaping @Sendable (LinkState) -> Void = { _ in },
        videoFrame: (@Sendable (DecodedVideoFrame) -> Void)? = nil,
        keyFrameRequested: (@Sendable () -> Void)? = nil,
        outputProblem: (@Sendable (String) -> Void)? = nil,
        dataChannel: (@Sendable (WebRTCDataChannel) -> Void)? = nil,
        videoReceiveStep: (@Sendable (VideoReceiveStep) -> Void)? = nil
    ) {
        self.videoReceiveStep = videoReceiveStep
        self.dataChannel = dataChannel
        self.localDescription = localDescription
        self.localCandidate = localCandidate
        self.stateChanged = stateChanged
        self.videoFrame = videoFrame
        self.keyFrameRequested = keyFrameRequested
        self.outputProblem = outputProblem
    }
}

/// The first received video's way to the decoder, step by step (`LinkEvents.videoReceiveStep`).
public enum VideoReceiveStep: Sendable, Hashable {
    /// ICE has a working pair (ice-connection-state connected); the DTLS handshake runs next.
    case iceConnected
    /// The peer's first video packet came out of the jitter buffer (webrtcbin added its src pad).
    case firstPacket
    /// The receive branch (depayloader, decoder) is linked to that pad.
    case branchLinked
}
