import Foundation
import IPCWire
import WebRTCLink

/// What an app's P2P link tells the app, in order (PROTOCOL.md 4: the app offers).
public enum AppLinkSignal: Sendable {
    case offer(sdp: String)
    case candidate(line: String, mLineIndex: Int)
    case state(LinkState)
}

/// The app's side of one P2P link, whatever carries it: the real webrtcbin offerer
/// (`AppVideoLink`) or a simulated one (`SimulatedAppLink`). `AppUser` reads its signals in order
/// and carries them out; `P2PLinkRules` (app role) decides whose replies count.
public protocol AppMediaLink: AnyObject, Sendable {
    var sessionId: String { get }
    var devId: String { get }
    /// Sent as the offer's `tid` and echoed by the device.
    var transactionId: String { get }
    /// The servers the offer's `token` names (PROTOCOL.md 4, 9.4).
    var ice: AppICEConfiguration { get }
    var signals: AsyncStream<AppLinkSignal> { get }
    /// Makes the offer (it comes on `signals`) in the caller's thread.
    func start() throws(WebRTCLinkError)
    /// Makes the offer off the caller's thread (a link prepared while its call rings), then calls
    /// `done` with the error, if any.
    func startInBackground(_ done: @escaping @Sendable (WebRTCLinkError?) -> Void)
    func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError)
    func addRemoteCandidate(_ line: String, sdpMLineIndex: Int)
    var state: LinkState { get }
    /// The offer went out now; the device's answer came now; the call was answered at `date`.
    func offerSent()
    func answerArrived()
    func callAnswered(at date: Date?)
    var answerArrivedAt: Date? { get }
    /// What the app measured, and when each step happened.
    var stats: VideoStats { get }
    var timeline: LinkTimeline { get }
    var linkStats: LinkStatistics { get }
    var selectedCandidatePair: ICECandidatePair? { get }
    /// PROTOCOL.md 7: what the `fmp4Stream` receiver saw (nil: the video comes over RTP).
    var hevcReport: AppHEVCReceiver.Report? { get }
    func close()
}

/// What the app asks its link factory for.
public struct AppLinkRequest: Sendable {
    public var sessionId: String
    public var devId: String
    public var sendVideo: VideoFormat?
    public var answeredAt: Date?
    public var saveFramesTo: String?
    public var decodes: Bool
    public var hevc: Bool
    public var ice: AppICEConfiguration

    public init(sessionId: String, devId: String, sendVideo: VideoFormat? = nil, answeredAt: Date? = nil,
                saveFramesTo: String? = nil, decodes: Bool = true, hevc: Bool = false,
                ice: AppICEConfiguration = AppICEConfiguration()) {
        self.sessionId = sessionId
        self.devId = devId
        self.sendVideo = sendVideo
        self.answeredAt = answeredAt
        self.saveFramesTo = saveFramesTo
        self.decodes = decodes
        self.hevc = hevc
        self.ice = ice
    }
}

/// The seam that builds an app's P2P links (issue 23): `GStreamerAppLinks` (the real ones) by
/// default, `SimulatedAppLinks` in tests and the simulator.
public protocol AppLinkFactory: Sendable {
    func makeLink(_ request: AppLinkRequest) -> any AppMediaLink
}

/// How the real app links receive and nominate. The defaults are what the app simulator does;
/// `bench media`'s hidden `--app-regular-nomination` and `--app-jitterbuffer-race` turn each off to
/// compare with the links as they were (docs/webrtc.md, "First frame, fifth pass").
public struct AppLinkTuning: Sendable, Hashable {
    /// Aggressive ICE nomination (the app offers, so it controls ICE); false: webrtcbin's regular
    /// nomination, about two pacing ticks slower to connect.
    public var aggressiveNomination: Bool
    /// The jitter buffers let the first packet in only once their start events have left; false:
    /// GStreamer 1.22's fast-start race is left in (a first frame can wait the whole latency).
    public var jitterBufferStartsAfterQueuedEvents: Bool

    public init(aggressiveNomination: Bool = true, jitterBufferStartsAfterQueuedEvents: Bool = true) {
        self.aggressiveNomination = aggressiveNomination
        self.jitterBufferStartsAfterQueuedEvents = jitterBufferStartsAfterQueuedEvents
    }
}

/// The real app links: webrtcbin offerers that decode and measure the device's video.
public struct GStreamerAppLinks: AppLinkFactory {
    public let tuning: AppLinkTuning

    public init(tuning: AppLinkTuning = AppLinkTuning()) { self.tuning = tuning }

    public func makeLink(_ request: AppLinkRequest) -> any AppMediaLink {
        AppVideoLink(sessionId: request.sessionId, devId: request.devId, sendsVideo: request.sendVideo,
                     answeredAt: request.answeredAt, saveFramesTo: request.saveFramesTo, decodes: request.decodes,
                     hevc: request.hevc, ice: request.ice, tuning: tuning)
    }
}

extension AppVideoLink: AppMediaLink {
    func start() throws(WebRTCLinkError) { try offerer.start() }
    func setRemoteAnswer(_ sdp: String) throws(WebRTCLinkError) { try offerer.setRemoteAnswer(sdp) }
    func addRemoteCandidate(_ line: String, sdpMLineIndex: Int) {
        remoteCandidateArrived()
        offerer.addRemoteCandidate(line, sdpMLineIndex: sdpMLineIndex)
    }
    var state: LinkState { offerer.state }
    var hevcReport: AppHEVCReceiver.Report? { hevc?.snapshot }
}
