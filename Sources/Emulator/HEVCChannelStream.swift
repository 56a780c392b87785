import Dispatch
import DeviceProfile
import Foundation
import IPCWire
import WebRTCLink

/// PROTOCOL.md 7 on the device: the `fmp4Stream` data channel the app opened on a P2P link. It
/// runs the handshake (`codec` on open, `recv` on `start`), and after `complete` sends the shared
/// H.265 feed of the link's stream as fMP4, one access unit per segment. A `resolution` switch
/// moves it to the other stream's H.265 feed; the new feed's first key frame comes with a new
/// initialisation segment at the new size, and the old feed goes on until then (no gap).
final class HEVCChannelStream: @unchecked Sendable {
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
    private let lock = NSLock()
    private var handshake = FMP4DeviceHandshake()
    private var muxer: FMP4StreamMuxer
    private var stream: StreamType
    private var active: Route?
    private var pending: Route?
    private var closed = false
    private var statistics = Statistics()
    private var dropping = false

    private final class Route: @unchecked Sendable {
        let feed: VideoFeeds.Feed
        var subscription = 0
        init(feed: VideoFeeds.Feed) { self.feed = feed }
    }

    init(channel: WebRTCDataChannel, profile: DeviceProfile, stream: StreamType, feeds: VideoFeeds,
         note: @escaping @Sendable (String) -> Void) {
        self.channel = channel
        self.profile = profile
        self.stream = stream
        self.feeds = feeds
        self.note = note
        let (_, output) = P2PLink.feedRequest(profile: profile, stream: stream)
        muxer = FMP4StreamMuxer(fps: output.fps)
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
        lock.withLock {
            var copy = statistics
            copy.muxer = muxer.stats
            return copy
        }
    }

    var isStreaming: Bool { lock.withLock { handshake.state == .streaming && !closed } }

    // MARK: Handshake (PROTOCOL.md 7, steps 1-3)

    private func opened() {
        let effect = lock.withLock { closed ? FMP4DeviceHandshake.Effect() : handshake.channelOpened() }
        apply(effect)
    }

    private func received(_ text: String) {
        let effect = lock.withLock { closed ? FMP4DeviceHandshake.Effect() : handshake.received(text) }
        apply(effect)
    }

    private func apply(_ effect: FMP4DeviceHandshake.Effect) {
        for message in effect.send where !channel.send(text: message.text) {
            lock.withLock { statistics.sendFailures += 1 }
        }
        if let refusal = effect.refusal { refuse(refusal) }
        if effect.startStreaming {
            note("fmp4Stream: streaming H.265")
            do {
                let route = try makeRoute(stream: lock.withLock { stream })
                let keep = lock.withLock { () -> Bool in
                    guard !closed, active == nil else { return false }
                    active = route
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
        lock.withLock { statistics.refusals += 1 }
        note(why)
    }

    // MARK: Stream switch (PROTOCOL.md 4 resolution, 7 step 5)

    /// Follows the link to the other stream. Before streaming starts, only the stream changes.
    func switchStream(to target: StreamType) {
        let streaming: Bool = lock.withLock {
            guard !closed, stream != target else { return false }
            stream = target
            return active != nil
        }
        guard streaming else { return }
        do {
            let route = try makeRoute(stream: target)
            let replaced: Route?? = lock.withLock {
                guard !closed else { return nil }
                defer { pending = route }
                return .some(pending)
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
        let (messages, retired, askKeyFrame): ([[UInt8]], Route?, Bool) = lock.withLock {
            if closed { return ([], nil, false) }
            var retired: Route?
            if route !== active {
                guard route === pending, isKeyFrame else { return ([], nil, false) }
                retired = active
                active = route
                pending = nil
            }
            if backlog > Self.maximumBuffered || (dropping && !isKeyFrame) {
                statistics.droppedForBackpressure += 1
                let first = !dropping
                dropping = true
                muxer.restartAtKeyFrame()
                return ([], retired, first)
            }
            dropping = false
            return (muxer.messages(forAccessUnit: Array(accessUnit), timeNanos: now), retired, false)
        }
        if let retired { drop(retired) }
        if askKeyFrame { route.feed.fanOut.requestKeyFrame() }
        for message in messages where !channel.send(bytes: message) {
            lock.withLock { statistics.sendFailures += 1 }
        }
    }

    /// Ends the stream (`disconnect`, `hang_up`, the link closing, or the channel closing).
    func close() {
        let routes: [Route] = lock.withLock {
            guard !closed else { return [] }
            closed = true
            handshake.channelClosed()
            defer {
                active = nil
                pending = nil
            }
            return [active, pending].compactMap { $0 }
        }
        for route in routes { drop(route) }
        channel.close()
    }
}
