import Dispatch
import DeviceProfile
import Foundation
import IPCWire
import Synchronization
import WebRTCLink

/// PROTOCOL.md 7 on the device: the `fmp4Stream` data channel the app opened on a P2P link. It
/// runs the handshake (`codec` on open, `recv` on `start`), and after `complete` sends the shared
/// H.265 feed of the link's stream as fMP4, one access unit per segment. A `resolution` switch
/// moves it to the other stream's H.265 feed; the new feed's first key frame comes with a new
/// initialisation segment at the new size, and the old feed goes on until then (no gap).
final class HEVCChannelStream: Sendable {
    /// Counters; they only grow.
    struct Statistics: Sendable {
        var muxer = FMP4StreamMuxer.Statistics()
        /// Access units not sent because the channel's send buffer was over `maximumBuffered`.
        var droppedForBackpressure = 0
        var sendFailures = 0
        var refusals = 0
    }

    /// Above this many bytes waiting in the channel, frames are dropped until the next key frame.
    static let maximumBuffered: UInt64 = 4 << 20

    let channel: WebRTCDataChannel
    private let profile: DeviceProfile
    private let feeds: VideoFeeds
    private let note: @Sendable (String) -> Void

    /// Everything that changes, behind one Mutex; the channel and the feeds are called with it
    /// released.
    private struct State {
        var handshake = FMP4DeviceHandshake()
        var muxer: FMP4StreamMuxer
        var stream: StreamType
        var active: Route?
        var pending: Route?
        var closed = false
        var statistics = Statistics()
        var dropping = false
    }
    private let state: Mutex<State>

    private final class Route: Sendable {
        let feed: VideoFeeds.Feed
        /// The fan-out subscription, set once subscribed.
        private let subscriptionId = Mutex(0)
        init(feed: VideoFeeds.Feed) { self.feed = feed }
        var subscription: Int {
            get { subscriptionId.withLock { $0 } }
            set { subscriptionId.withLock { $0 = newValue } }
        }
    }

    init(channel: WebRTCDataChannel, profile: DeviceProfile, stream: StreamType, feeds: VideoFeeds,
         note: @escaping @Sendable (String) -> Void) {
        self.channel = channel
        self.profile = profile
        self.feeds = feeds
        self.note = note
        let (_, output) = P2PLink.feedRequest(profile: profile, stream: stream)
        state = Mutex(State(muxer: FMP4StreamMuxer(fps: output.fps), stream: stream))
    }

    /// Connects the channel's handlers (the handshake starts when it is open).
    func start() {
        channel.setHandlers(.init(
            opened: { [weak self] in self?.opened() },
            closed: { [weak self] in self?.close() },
            text: { [weak self] text in self?.received(text) },
            bytes: { [weak self] bytes in self?.refuse("a binary message of \(bytes.count) bytes from the app: ignored") },
            error: { [weak self] text in self?.note("fmp4Stream channel error: \(text)") }))
    }

    var stats: Statistics {
        state.withLock { s in
            var copy = s.statistics
            copy.muxer = s.muxer.stats
            return copy
        }
    }

    var isStreaming: Bool { state.withLock { $0.handshake.state == .streaming && !$0.closed } }

    // MARK: Handshake (PROTOCOL.md 7, steps 1-3)

    private func opened() {
        let effect = state.withLock { $0.closed ? FMP4DeviceHandshake.Effect() : $0.handshake.channelOpened() }
        apply(effect)
    }

    private func received(_ text: String) {
        let effect = state.withLock { $0.closed ? FMP4DeviceHandshake.Effect() : $0.handshake.received(text) }
        apply(effect)
    }

    private func apply(_ effect: FMP4DeviceHandshake.Effect) {
        for message in effect.send where !channel.send(text: message.text) {
            state.withLock { $0.statistics.sendFailures += 1 }
        }
        if let refusal = effect.refusal { refuse(refusal) }
        if effect.startStreaming {
            note("fmp4Stream: streaming H.265")
            do {
                let route = try makeRoute(stream: state.withLock { $0.stream })
                let keep = state.withLock { s -> Bool in
                    guard !s.closed, s.active == nil else { return false }
                    s.active = route
                    return true
                }
                guard keep else { return feeds.release(route.feed) }
                subscribe(route)
            } catch {
                note("fmp4Stream: cannot start the H.265 feed: \(error)")
            }
        }
    }

    private func refuse(_ why: String) {
        state.withLock { $0.statistics.refusals += 1 }
        note(why)
    }

    // MARK: Stream switch (PROTOCOL.md 4 resolution, 7 step 5)

    /// Follows the link to the other stream. Before streaming starts, only the stream changes.
    func switchStream(to target: StreamType) {
        let streaming: Bool = state.withLock { s in
            guard !s.closed, s.stream != target else { return false }
            s.stream = target
            return s.active != nil
        }
        guard streaming else { return }
        do {
            let route = try makeRoute(stream: target)
            let replaced: Route?? = state.withLock { s in
                guard !s.closed else { return nil }
                defer { s.pending = route }
                return .some(s.pending)
            }
            guard let replaced else { return feeds.release(route.feed) }
            if let old = replaced { drop(old) }
            subscribe(route)
        } catch {
            note("fmp4Stream: cannot switch the H.265 feed: \(error)")
        }
    }

    private func makeRoute(stream: StreamType) throws -> Route {
        let (camera, output) = P2PLink.feedRequest(profile: profile, stream: stream)
        return Route(feed: try feeds.acquire(camera: camera, output: output, codec: .h265))
    }

    private func subscribe(_ route: Route) {
        route.subscription = route.feed.fanOut.subscribe { [weak self, weak route] accessUnit, isKeyFrame in
            guard let self, let route else { return }
            self.send(accessUnit, isKeyFrame: isKeyFrame, via: route)
        }
    }

    private func drop(_ route: Route) {
        route.feed.fanOut.unsubscribe(route.subscription)
        feeds.release(route.feed)
    }

    // MARK: Sending (PROTOCOL.md 7 step 4)

    private func send(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool, via route: Route) {
        let now = DispatchTime.now().uptimeNanoseconds
        let backlog = channel.bufferedAmount
        let (messages, retired, askKeyFrame): ([[UInt8]], Route?, Bool) = state.withLock { s in
            if s.closed { return ([], nil, false) }
            var retired: Route?
            if route !== s.active {
                guard route === s.pending, isKeyFrame else { return ([], nil, false) }
                retired = s.active
                s.active = route
                s.pending = nil
            }
            if backlog > Self.maximumBuffered || (s.dropping && !isKeyFrame) {
                s.statistics.droppedForBackpressure += 1
                let first = !s.dropping
                s.dropping = true
                s.muxer.restartAtKeyFrame()
                return ([], retired, first)
            }
            s.dropping = false
            return (s.muxer.messages(forAccessUnit: Array(accessUnit), timeNanos: now), retired, false)
        }
        if let retired { drop(retired) }
        if askKeyFrame { route.feed.fanOut.requestKeyFrame() }
        for message in messages where !channel.send(bytes: message) {
            state.withLock { $0.statistics.sendFailures += 1 }
        }
    }

    /// Ends the stream (`disconnect`, `hang_up`, the link closing, or the channel closing).
    func close() {
        let routes: [Route] = state.withLock { s in
            guard !s.closed else { return [] }
            s.closed = true
            s.handshake.channelClosed()
            defer {
                s.active = nil
                s.pending = nil
            }
            return [s.active, s.pending].compactMap { $0 }
        }
        for route in routes { drop(route) }
        channel.close()
    }
}
