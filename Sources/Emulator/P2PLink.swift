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
final class P2PLink: DeviceMediaLink, @unchecked Sendable {
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
    private let lock = NSLock()
    private var active: Route?
    private var pending: Route?
    private var stream: StreamType
    private var closed = false
    private var connected = false
    /// The `fmp4Stream` data channel's stream (PROTOCOL.md 7), once the app opened it.
    private var hevc: HEVCChannelStream?
    /// Whether the answer has an RTP video track (an app that takes HEVC over the data channel
    /// may offer none: then no H.264 feed is used).
    private let sendsRTPVideo: Bool

    /// One subscription to one feed.
    private final class Route: @unchecked Sendable {
        let feed: VideoFeeds.Feed
        let stream: StreamType
        let requestedAt = ContinuousClock.now
        var subscription = 0
        var statusWatch = 0
        init(feed: VideoFeeds.Feed, stream: StreamType) {
            self.feed = feed
            self.stream = stream
        }
    }

    /// Builds the link; `start()` negotiates and starts sending.
    init(offer: SignalOffer, header: SignalHeader, profile: DeviceProfile, liveView: Bool = false,
         feeds: VideoFeeds = .shared, slots: LiveViewSlots = .shared, openedAtMs: Int64) throws {
        self.liveView = liveView
        self.slots = slots
        self.openedAtMs = openedAtMs
        sessionId = header.sessionId
        offerHeader = header
        stream = offer.streamType
        self.profile = profile
        self.feeds = feeds
        let (signalStream, continuation) = AsyncStream<P2PLinkSignal>.makeStream(bufferingPolicy: .unbounded)
        signals = signalStream
        self.continuation = continuation

        let (_, output) = Self.feedRequest(profile: profile, stream: offer.streamType)
        let media = SendMedia(video: output, videoInput: .h264AccessUnits)
        let options = LinkOptions(iceServers: offer.iceServers.map {
            WebRTCLink.ICEServer(urls: $0.urls, username: $0.username ?? "", credential: $0.credential ?? "")
        })
        let box = LinkBox()
        let events = LinkEvents(
            localDescription: { sdp in continuation.yield(.answer(sdp: sdp)) },
            localCandidate: { c in continuation.yield(.candidate(line: c.candidate, mLineIndex: c.sdpMLineIndex)) },
            stateChanged: { state in
                switch state {
                case .connected:
                    // Frames sent before DTLS was up are lost: a key frame now lets the peer
                    // start at once (deltas still flow meanwhile: no gap for a peer that got them).
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
            devices: LocalMediaDevices(profile: profile, sessionId: header.sessionId), events: events)
        sendsRTPVideo = answerer.plan.videoPayload != nil
        box.link = self
    }

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

    /// Starts the main stream's feed ahead of a call's link (a call rings), kept for `duration`.
    static func prepare(profile: DeviceProfile, for duration: Duration, feeds: VideoFeeds = .shared) {
        guard feeds.preparesWhileRinging, profile.capabilities.video != nil else { return }
        let (camera, output) = feedRequest(profile: profile, stream: .main)
        feeds.hold(camera: camera, output: output, for: duration)
    }

    /// Negotiates (the answer and candidates follow on `signals`) and starts sending frames.
    func start() throws {
        if liveView { slots.take() }
        do {
            if sendsRTPVideo {
                let route = try makeRoute(stream: stream)
                lock.withLock { active = route }
                subscribe(route)
            }
            try answerer.start()
        } catch {
            close()
            throw error
        }
    }

    /// Whether the link ever came up (DTLS connected).
    var hasConnected: Bool { lock.withLock { connected } }

    fileprivate func markConnected() { lock.withLock { connected = true } }

    /// The stream the link sends now (or is switching to).
    var streamType: StreamType { lock.withLock { stream } }

    /// PROTOCOL.md 4 `resolution`: moves the link to the other stream's feed. The new feed is
    /// asked for a key frame; the old feed goes on until it arrives. False when the link already
    /// sends that stream (nothing to do).
    @discardableResult
    func switchStream(to target: StreamType) throws -> Bool {
        let same = lock.withLock { () -> Bool in
            guard !closed, stream != target else { return true }
            return false
        }
        if same { return false }
        lock.withLock { hevc }?.switchStream(to: target)
        guard sendsRTPVideo else {
            lock.withLock { stream = target }
            return true
        }
        let route = try makeRoute(stream: target)
        let replaced: Route?? = lock.withLock {
            guard !closed else { return nil }
            defer {
                pending = route
                stream = target
            }
            return .some(pending)
        }
        guard let replaced else {
            feeds.release(route.feed)
            return false
        }
        if let old = replaced { drop(old) }
        if let current = lock.withLock({ active }), current.feed === route.feed {
            // Both streams come from one feed (a clip, an H.264 camera): nothing changes.
            lock.withLock { pending = nil }
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
        route.subscription = route.feed.fanOut.subscribe { [weak self, weak route] accessUnit, isKeyFrame in
            guard let self, let route else { return }
            self.send(accessUnit, isKeyFrame: isKeyFrame, via: route)
        }
        let continuation = self.continuation
        route.statusWatch = route.feed.capture.watchStatus { status in
            if case .stopped = status { return }
            continuation.yield(.camera(status))
        }
    }

    private func send(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool, via route: Route) {
        let (sends, retired): (Bool, Route?) = lock.withLock {
            if closed { return (false, nil) }
            if route === active { return (true, nil) }
            // The fan-out gives a new subscriber nothing before a key frame.
            guard route === pending, isKeyFrame else { return (false, nil) }
            let old = active
            active = route
            pending = nil
            return (true, old)
        }
        if let retired { drop(retired) }
        if sends { answerer.pushH264AccessUnit(accessUnit, isKeyFrame: isKeyFrame) }
    }

    private func drop(_ route: Route) {
        route.feed.fanOut.unsubscribe(route.subscription)
        route.feed.capture.unwatchStatus(route.statusWatch)
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
        let old: HEVCChannelStream?? = lock.withLock {
            guard !closed else { return nil }
            defer { hevc = stream }
            return .some(hevc)
        }
        guard let old else { return }
        old?.close()
        stream.start()
    }

    /// The `fmp4Stream` counters, when the app opened that channel.
    var hevcStats: HEVCChannelStream.Statistics? { lock.withLock { hevc }?.stats }

    fileprivate func peerAskedForKeyFrame() {
        lock.withLock { active }?.feed.fanOut.requestKeyFrame()
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
        let (first, routes): (Bool, [Route]) = lock.withLock {
            guard !closed else { return (false, []) }
            closed = true
            defer {
                active = nil
                pending = nil
            }
            return (true, [active, pending].compactMap { $0 })
        }
        guard first else { return }
        for route in routes { drop(route) }
        lock.withLock { hevc }?.close()
        if liveView { slots.give() }
        answerer.close()
        continuation.finish()
    }
}

/// The link, weakly, for the answerer's callbacks (no cycle).
private final class LinkBox: @unchecked Sendable {
    weak var link: P2PLink?
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
