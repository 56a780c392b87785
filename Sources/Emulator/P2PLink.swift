import Camera
import DeviceProfile
import Foundation
import Synchronization
import IPCWire
import WebRTCLink

/// What a P2P link tells its device, in order (answer before candidates; PROTOCOL.md 4).
public enum P2PLinkSignal: Sendable {
    case answer(sdp: String)
    case candidate(line: String, mLineIndex: Int)
    case up
    case lost(String)
    /// The camera the link streams changed state: unplugged (no video, and why) or back (live).
    case camera(FrameSourceStatus)
    /// The device's screen or sound could not do its part (the link goes on without it).
    case outputProblem(String)
    /// Something worth a log line (the `fmp4Stream` channel's progress and refusals).
    case note(String)
}

/// One P2P media link of a device (PROTOCOL.md 4): a webrtcbin answerer that sends the shared
/// H.264 feed of the profile's camera at the link's stream size (issue 11: encode once, fan out;
/// `VideoFeeds`). Its signals come out as one ordered stream. A `resolution` message moves the
/// link to the other stream's feed; the new feed's first frame is a key frame, and the old one
/// keeps sending until then (no gap).
final class P2PLink: DeviceMediaLink, Sendable {
    let sessionId: String
    /// The offer's header; replies swap from/to and echo the rest.
    let offerHeader: SignalHeader
    let signals: AsyncStream<P2PLinkSignal>
    /// When the link was made, on the device's clock (its send rate is frames over age).
    let openedAtMs: Int64
    /// A link without an answered call (it holds one of the process's live-view slots).
    let liveView: Bool
    private let profile: DeviceProfile
    private let feeds: VideoFeeds
    private let slots: LiveViewSlots
    private let answerer: WebRTCAnswerer
    private let continuation: AsyncStream<P2PLinkSignal>.Continuation
    private let state: Mutex<State>
    /// What the link's threads (GStreamer's, the feeds', the device's) share.
    private struct State {
        var active: Route?
        var pending: Route?
        var stream: StreamType
        var closed = false
        var connected = false
        /// The `fmp4Stream` data channel's stream (PROTOCOL.md 7), once the app opened it.
        var hevc: HEVCChannelStream?
    }
    /// Whether the answer has an RTP video track (an app that takes HEVC over the data channel
    /// may offer none: then no H.264 feed is used).
    private let sendsRTPVideo: Bool

    /// One subscription to one feed.
    private final class Route: Sendable {
        let feed: VideoFeeds.Feed
        let stream: StreamType
        /// The fan-out subscription and the capture status watch (set once subscribed).
        let ids = Mutex((subscription: 0, statusWatch: 0))
        init(feed: VideoFeeds.Feed, stream: StreamType) {
            self.feed = feed
            self.stream = stream
        }
    }

    /// Builds the link; `start()` negotiates and starts sending.
    init(offer: SignalOffer, header: SignalHeader, profile: DeviceProfile, liveView: Bool = false,
         feeds: VideoFeeds = .shared, slots: LiveViewSlots = .shared, openedAtMs: Int64,
         prepared: PreparedAnswerer? = nil) throws {
        self.liveView = liveView
        self.slots = slots
        self.openedAtMs = openedAtMs
        sessionId = header.sessionId
        offerHeader = header
        state = Mutex(State(stream: offer.streamType))
        self.profile = profile
        self.feeds = feeds
        let (signalStream, continuation) = AsyncStream<P2PLinkSignal>.makeStream(bufferingPolicy: .unbounded)
        signals = signalStream
        self.continuation = continuation

        let (_, output) = Self.feedRequest(profile: profile, stream: offer.streamType)
        let media = SendMedia(video: output, videoInput: .h264AccessUnits)
        let options = Self.linkOptions(iceServers: offer.iceServers.map {
            WebRTCLink.ICEServer(urls: $0.urls, username: $0.username ?? "", credential: $0.credential ?? "")
        })
        let box = LinkBox()
        let events = LinkEvents(
            localDescription: { sdp in continuation.yield(.answer(sdp: sdp)) },
            localCandidate: { c in continuation.yield(.candidate(line: c.candidate, mLineIndex: c.sdpMLineIndex)) },
            stateChanged: { state in
                switch state {
                case .connected:
                    // webrtcbin (1.22) holds what was pushed before DTLS was up and sends it
                    // now; a key frame asked here serves a peer that missed it anyway (deltas
                    // still flow meanwhile: no gap for a peer that got them).
                    box.link?.markConnected()
                    box.link?.peerAskedForKeyFrame()
                    continuation.yield(.up)
                case .lost(let why): continuation.yield(.lost("\(why)"))
                default: break
                }
            },
            keyFrameRequested: { box.link?.peerAskedForKeyFrame() },
            outputProblem: { continuation.yield(.outputProblem($0)) },
            dataChannel: { channel in box.link?.dataChannelOpened(channel) })
        answerer = try WebRTCAnswerer(
            offer: offer.sdp, media: media, options: options,
            devices: LocalMediaDevices(profile: profile, sessionId: header.sessionId), events: events, prepared: prepared)
        sendsRTPVideo = answerer.plan.videoPayload != nil
        box.link = self
    }

    /// The options of every device link: the offer's ICE servers, the rest default.
    static func linkOptions(iceServers: [WebRTCLink.ICEServer]) -> LinkOptions { LinkOptions(iceServers: iceServers) }

    /// Whether the link took a pipeline built while its call rang (`PreparedAnswers`).
    var usesPreparedPipeline: Bool { answerer.usesPrepared }

    /// The camera and the size one of the profile's streams is sent at: the test pattern is drawn
    /// at exactly the stream's size; a V4L2 camera keeps its capture settings and is scaled to the
    /// stream's size; a clip (and an H.264 or H.265 camera) is sent as it is.
    static func feedRequest(profile: DeviceProfile, stream: StreamType) -> (CameraConfig, VideoFormat) {
        var camera = CameraConfig(profile: profile, stream: stream)
        let offered = (stream == .sub ? profile.capabilities.video?.sub : profile.capabilities.video?.main)
            ?? DeviceProfile.StreamFormat.defaultMain
        var output = VideoFormat(width: camera.width, height: camera.height, fps: Int(camera.fps.rounded()))
        if case .v4l2(let cam) = profile.camera {
            if cam.format == .auto {
                // `auto` asks the camera for MJPEG, what USB webcams deliver at full rate; the
                // shared encoder takes whatever format the camera settles on.
                camera.preferredFormat = .mjpeg
            }
            if cam.format != .h264, cam.format != .h265 {
                output = VideoFormat(width: offered.width, height: offered.height, fps: cam.fps)
            }
        }
        return (camera, output)
    }

    /// Starts the main stream's feed ahead of a call's link (a call rings), kept for `duration`,
    /// and asks it for a key frame: a call answered at once (within `RecentUnits.Limit.maxAge`)
    /// starts its link from that key frame instead of waiting for one made at its offer.
    static func prepare(profile: DeviceProfile, for duration: Duration, feeds: VideoFeeds = .shared) {
        guard feeds.preparesWhileRinging, profile.capabilities.video != nil else { return }
        let (camera, output) = feedRequest(profile: profile, stream: .main)
        // As `VideoFeeds.hold`, with the feed in hand to ask it for the key frame.
        guard let feed = try? feeds.acquire(camera: camera, output: output) else { return }
        feed.fanOut.requestKeyFrame()
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: duration.nanosecondsValue))) {
            feeds.release(feed)
        }
    }

    /// Negotiates (the answer and candidates follow on `signals`) and starts sending frames.
    func start() throws {
        if liveView { slots.take() }
        do {
            let route = sendsRTPVideo ? try makeRoute(stream: streamType) : nil
            state.withLock { $0.active = route }
            try answerer.start()
            // After the start: a subscriber may get the feed's recent key frame at once, and
            // the link's appsrc takes it only once the pipeline plays.
            if let route { subscribe(route) }
        } catch {
            close()
            throw error
        }
    }

    /// Whether the link ever came up (DTLS connected).
    var hasConnected: Bool { state.withLock { $0.connected } }

    fileprivate func markConnected() { state.withLock { $0.connected = true } }

    /// The stream the link sends now (or is switching to).
    var streamType: StreamType { state.withLock { $0.stream } }

    /// PROTOCOL.md 4 `resolution`: moves the link to the other stream's feed. The new feed is
    /// asked for a key frame; the old feed goes on until it arrives. False when the link already
    /// sends that stream (nothing to do).
    @discardableResult
    func switchStream(to target: StreamType) throws -> Bool {
        let same = state.withLock { s -> Bool in
            guard !s.closed, s.stream != target else { return true }
            return false
        }
        if same { return false }
        state.withLock { $0.hevc }?.switchStream(to: target)
        guard sendsRTPVideo else {
            state.withLock { $0.stream = target }
            return true
        }
        let route = try makeRoute(stream: target)
        let replaced: Route?? = state.withLock { s in
            guard !s.closed else { return nil }
            defer {
                s.pending = route
                s.stream = target
            }
            return .some(s.pending)
        }
        guard let replaced else {
            feeds.release(route.feed)
            return false
        }
        if let old = replaced { drop(old) }
        if let current = state.withLock({ $0.active }), current.feed === route.feed {
            // Both streams come from one feed (a clip, an H.264 camera): nothing changes.
            state.withLock { $0.pending = nil }
            feeds.release(route.feed)
            return true
        }
        subscribe(route)
        return true
    }

    private func makeRoute(stream: StreamType) throws -> Route {
        let (camera, output) = Self.feedRequest(profile: profile, stream: stream)
        return Route(feed: try feeds.acquire(camera: camera, output: output), stream: stream)
    }

    private func subscribe(_ route: Route) {
        // A recent key frame (one asked while the call rang) starts the link at once.
        let subscription = route.feed.fanOut.subscribe(startFromRecentKeyFrame: true, withPackets: {
            [weak self, weak route] accessUnit, isKeyFrame, packets in
            guard let self, let route else { return }
            self.send(accessUnit, isKeyFrame: isKeyFrame, packets: packets, via: route)
        })
        let continuation = self.continuation
        let statusWatch = route.feed.capture.watchStatus { status in
            if case .stopped = status { return }
            continuation.yield(.camera(status))
        }
        route.ids.withLock { $0 = (subscription: subscription, statusWatch: statusWatch) }
    }

    private func send(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool, packets: RTPPackets?, via route: Route) {
        let (sends, retired): (Bool, Route?) = state.withLock { s in
            if s.closed { return (false, nil) }
            if route === s.active { return (true, nil) }
            // The fan-out gives a new subscriber nothing before a key frame.
            guard route === s.pending, isKeyFrame else { return (false, nil) }
            let old = s.active
            s.active = route
            s.pending = nil
            return (true, old)
        }
        if let retired { drop(retired) }
        if sends { answerer.pushH264AccessUnit(accessUnit, isKeyFrame: isKeyFrame, packets: packets) }
    }

    private func drop(_ route: Route) {
        let ids = route.ids.withLock { $0 }
        route.feed.fanOut.unsubscribe(ids.subscription)
        route.feed.capture.unwatchStatus(ids.statusWatch)
        feeds.release(route.feed)
    }

    /// PROTOCOL.md 7: a data channel the app opened. `fmp4Stream` on a profile that lists H265
    /// streams HEVC over it; any other channel is left alone.
    fileprivate func dataChannelOpened(_ channel: WebRTCDataChannel) {
        guard channel.label == FMP4ControlMessage.channelLabel else {
            continuation.yield(.note("ignored the app's data channel '\(channel.label)'"))
            return
        }
        guard profile.capabilities.video?.codecs.contains(.h265) == true else {
            continuation.yield(.note("the app opened fmp4Stream, but the profile's video codecs do not include H265: ignored"))
            return
        }
        let continuation = self.continuation
        let stream = HEVCChannelStream(
            channel: channel, profile: profile, stream: streamType, feeds: feeds,
            note: { text in continuation.yield(.note(text)) })
        let old: HEVCChannelStream?? = state.withLock { s in
            guard !s.closed else { return nil }
            defer { s.hevc = stream }
            return .some(s.hevc)
        }
        guard let old else { return }
        old?.close()
        stream.start()
    }

    /// The `fmp4Stream` counters, when the app opened that channel.
    var hevcStats: HEVCChannelStream.Statistics? { state.withLock { $0.hevc }?.stats }

    fileprivate func peerAskedForKeyFrame() {
        state.withLock { $0.active }?.feed.fanOut.requestKeyFrame()
    }

    func addRemoteCandidate(_ line: String, mLineIndex: Int) {
        answerer.addRemoteCandidate(line, sdpMLineIndex: mLineIndex)
    }

    /// Media counters: frames sent, the peer's frames and packets received.
    var stats: LinkStatistics { answerer.stats }

    /// The latest frame received from the app, as JPEG (two-way calls).
    func snapshotJPEG() throws -> [UInt8] { try answerer.snapshotJPEG() }

    /// PROTOCOL.md 8.6: the app's audio on the speaker, or muted.
    func setSpeaker(on: Bool) { answerer.setSpeaker(on: on) }
    var isSpeakerOn: Bool { answerer.isSpeakerOn }

    func close() {
        let (first, routes): (Bool, [Route]) = state.withLock { s in
            guard !s.closed else { return (false, []) }
            s.closed = true
            defer {
                s.active = nil
                s.pending = nil
            }
            return (true, [s.active, s.pending].compactMap { $0 })
        }
        guard first else { return }
        for route in routes { drop(route) }
        state.withLock { $0.hevc }?.close()
        if liveView { slots.give() }
        answerer.close()
        continuation.finish()
    }
}

/// The link, weakly, for the answerer's callbacks (no cycle).
private final class LinkBox: Sendable {
    private struct Weak { weak var link: P2PLink? }
    private let ref = Mutex(Weak())

    var link: P2PLink? {
        get { ref.withLock { $0.link } }
        set { ref.withLock { $0.link = newValue } }
    }
}

/// The process's live-view links (issue 11: a cap per process as well as per device). The real
/// link factory holds them (`GStreamerDeviceLinks`); a simulated device has none to spend.
final class LiveViewSlots: Sendable {
    static let shared = LiveViewSlots()
    private let slots = Mutex((open: 0, maximum: 64))

    var limit: Int {
        get { slots.withLock { $0.maximum } }
        set { slots.withLock { $0.maximum = max(0, newValue) } }
    }
    var hasRoom: Bool { slots.withLock { $0.open < $0.maximum } }
    var count: Int { slots.withLock { $0.open } }
    func take() { slots.withLock { $0.open += 1 } }
    func give() { slots.withLock { $0.open = max(0, $0.open - 1) } }
}
