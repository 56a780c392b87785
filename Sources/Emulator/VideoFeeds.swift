import Camera
import Dispatch
import Foundation
import Synchronization
import WebRTCLink

/// Encode once, fan out (issue 11): per process, one capture per camera and one H.264 stream per
/// (camera, stream size), shared by every P2P link that sends it. A V4L2 camera is opened once
/// however many links (live view and a call) stream it; a clip or an H.264 camera is passed
/// through from its one reader, and so is an H.265 clip or camera (to the `fmp4Stream` channel).
/// A feed nobody uses lingers a little (a call that follows finds it warm), then stops, and its
/// capture with it when that was the last user.
public final class VideoFeeds: Sendable {
    /// The process's feeds (what every device uses unless it is given others).
    public static let shared = VideoFeeds()

    /// How long a feed runs on after its last user left.
    var linger: Duration {
        get { state.withLock { $0.lingerDuration } }
        set { state.withLock { $0.lingerDuration = newValue } }
    }

    /// Whether a ringing call starts its main stream's feed (`P2PLink.prepare`): on in `ipcemu
    /// run` and the benchmark, off by default so that audio-only tests pay nothing.
    var preparesWhileRinging: Bool {
        get { state.withLock { $0.prepareOnRing } }
        set { state.withLock { $0.prepareOnRing = newValue } }
    }

    /// A running feed and who uses it.
    private struct FeedEntry {
        let feed: Feed
        var users: Int
        /// Moves on every acquire and release: a delayed stop acts only if nothing happened since.
        var generation: Int
    }

    private struct State {
        var lingerDuration: Duration = .seconds(5)
        var prepareOnRing = false
        var captures: [String: Capture] = [:]
        var feeds: [String: FeedEntry] = [:]
        /// The fan-out counts of the feeds stopped so far (so the process's sums only grow).
        var retiredFanOut = FanOutStatistics()
    }
    private let state = Mutex(State())

    /// The driver V4L2 cameras are opened through (`.system`; a test gives the fake driver).
    private let v4l2Driver: V4L2Driver

    /// Device pipelines built while calls ring, for their offers (issue 24 item 6).
    let preparedAnswers = PreparedAnswers()

    /// Feeds of their own (a test: its cameras behind a fake V4L2 driver, counts it owns).
    /// `preparesWhileRinging`: a ringing call starts its feed and builds its device pipeline (as
    /// `MediaPreparation.enable()` turns on for the process's shared feeds).
    public init(v4l2Driver: V4L2Driver = .system, preparesWhileRinging: Bool = false) {
        self.v4l2Driver = v4l2Driver
        state.withLock { $0.prepareOnRing = preparesWhileRinging }
    }

    /// Device pipelines prepared while calls rang: waiting now, and over the feeds' life built,
    /// taken by an offer, discarded (the call ended without one, or expired).
    public var preparedPipelines: (waiting: Int, built: Int, taken: Int, discarded: Int) {
        let c = preparedAnswers.counts
        return (c.waiting, c.built, c.used, c.discarded)
    }

    /// A running feed of `camera` sent at `output` (the size an encoder makes; ignored when the
    /// camera delivers H.264). Balance with `release`.
    /// `codec` .h265: the feed for the `fmp4Stream` data channel (PROTOCOL.md 7), its own encoder
    /// on the same capture.
    func acquire(camera: CameraConfig, output: VideoFormat, codec: SharedVideoCodec = .h264) throws(CameraError) -> Feed {
        let captureKey = Self.captureKey(camera)
        let feedKey = "\(captureKey)|out \(output.width)x\(output.height)@\(output.fps)" + (codec == .h264 ? "" : " \(codec)")
        let driver = v4l2Driver
        // Held while a new capture starts, so that two users of one camera open it once (the
        // source calls back into the capture's own lock only).
        return try state.withLock { (s) throws(CameraError) -> Feed in
            if var entry = s.feeds[feedKey] {
                entry.users += 1
                entry.generation += 1
                s.feeds[feedKey] = entry
                return entry.feed
            }
            let capture: Capture
            if let existing = s.captures[captureKey] {
                capture = existing
            } else {
                capture = Capture(key: captureKey, source: try camera.makeSource(v4l2Driver: driver))
                try capture.start()
                s.captures[captureKey] = capture
            }
            let feed = Feed(key: feedKey, output: output, capture: capture, codec: codec)
            s.feeds[feedKey] = FeedEntry(feed: feed, users: 1, generation: 0)
            capture.attach(feed)
            return feed
        }
    }

    /// Gives a feed back; the last user's release stops it after `linger`.
    func release(_ feed: Feed) {
        let scheduled: (generation: Int, delay: Duration)? = state.withLock { s in
            // A feed already stopped and forgotten has nothing left to release.
            guard var entry = s.feeds[feed.key], entry.feed === feed else { return nil }
            entry.users = max(0, entry.users - 1)
            entry.generation += 1
            s.feeds[feed.key] = entry
            return (entry.generation, s.lingerDuration)
        }
        guard let (generation, delay) = scheduled else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: delay.nanosecondsValue))) {
            [weak self] in self?.stopIfUnused(feed, generation: generation)
        }
    }

    /// Starts a feed now and keeps it for `duration` (a call that rings: its link finds the
    /// encoder running and a key frame ready).
    func hold(camera: CameraConfig, output: VideoFormat, for duration: Duration) {
        guard let feed = try? acquire(camera: camera, output: output) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: duration.nanosecondsValue))) {
            [weak self] in self?.release(feed)
        }
    }

    /// The running feeds whose key (camera, size, codec) contains `text` (for tests).
    func feeds(keyContaining text: String) -> [Feed] {
        state.withLock { s in s.feeds.values.map(\.feed).filter { $0.key.contains(text) } }
    }

    /// Open captures and feeds (for tests and the benchmark).
    var counts: (captures: Int, feeds: Int) { state.withLock { ($0.captures.count, $0.feeds.count) } }

    /// What every fan-out of these feeds counted (the running feeds' and the stopped ones'), and
    /// the links subscribed now: `/metrics` (`ipcemu_video_fanout_*`) and `bench media --fleet`.
    public var fanOut: (statistics: FanOutStatistics, subscribers: Int) {
        state.withLock { s in
            var sum = s.retiredFanOut
            var subscribers = 0
            for entry in s.feeds.values {
                sum.add(entry.feed.statistics)
                subscribers += entry.feed.fanOut.subscriberCount
            }
            return (sum, subscribers)
        }
    }

    private func stopIfUnused(_ feed: Feed, generation: Int) {
        let captureToStop: Capture?? = state.withLock { s in
            guard let entry = s.feeds[feed.key], entry.feed === feed, entry.users == 0, entry.generation == generation
            else { return nil }
            s.feeds.removeValue(forKey: feed.key)
            s.retiredFanOut.add(feed.statistics)
            let capture = feed.capture
            capture.detach(feed)
            guard capture.feedCount == 0 else { return .some(nil) }
            s.captures.removeValue(forKey: capture.key)
            return .some(capture)
        }
        guard let stop = captureToStop else { return }
        // The capture first: its thread is the one pushing frames into the feed, and the camera
        // is closed whatever the encoder's stop does.
        stop?.stop()
        feed.stop()
    }

    /// One capture per camera: kind, capture size, rate and format. The test pattern is drawn per
    /// stream size, so each of its sizes is its own capture.
    static func captureKey(_ camera: CameraConfig) -> String {
        "\(camera.kind) \(camera.width)x\(camera.height)@\(camera.fps) \(camera.preferredFormat?.rawValue ?? "any")"
    }

    // MARK: - Capture

    /// One started frame source and the feeds it feeds.
    final class Capture: Sendable {
        let key: String
        let source: any FrameSource

        private struct State {
            var consumers: [ObjectIdentifier: Feed] = [:]
            var lastStatus: FrameSourceStatus?
            var statusWatchers: [Int: @Sendable (FrameSourceStatus) -> Void] = [:]
            var nextWatcher = 0
        }
        private let state = Mutex(State())

        init(key: String, source: any FrameSource) {
            self.key = key
            self.source = source
        }

        func start() throws(CameraError) {
            try source.start { [weak self] event in
                guard let self else { return }
                switch event {
                case .frame(let frame):
                    let feeds = self.state.withLock { Array($0.consumers.values) }
                    for feed in feeds { feed.take(frame) }
                case .status(let status):
                    let watchers = self.state.withLock { s -> [@Sendable (FrameSourceStatus) -> Void] in
                        s.lastStatus = status
                        return Array(s.statusWatchers.values)
                    }
                    for watcher in watchers { watcher(status) }
                }
            }
        }

        /// What the source last said (live, no video and why, stopped); nil before it said anything.
        var status: FrameSourceStatus? { state.withLock { $0.lastStatus } }

        /// Calls `watcher` with the status the source last reported, if any (at once), then (on
        /// the capture's thread) with each status from now on (a camera unplugged and plugged
        /// back, issue 10); give the id back to `unwatchStatus`. The last status is handed over
        /// under the lock that also orders the source's reports, so the watcher sees them in order:
        /// `watcher` must not block and must not call back into this capture (the one call made
        /// with the lock held, for that order).
        func watchStatus(_ watcher: @escaping @Sendable (FrameSourceStatus) -> Void) -> Int {
            state.withLock { s in
                s.nextWatcher += 1
                s.statusWatchers[s.nextWatcher] = watcher
                if let lastStatus = s.lastStatus { watcher(lastStatus) }
                return s.nextWatcher
            }
        }

        func unwatchStatus(_ id: Int) { _ = state.withLock { $0.statusWatchers.removeValue(forKey: id) } }

        func attach(_ feed: Feed) { state.withLock { $0.consumers[ObjectIdentifier(feed)] = feed } }
        func detach(_ feed: Feed) { _ = state.withLock { $0.consumers.removeValue(forKey: ObjectIdentifier(feed)) } }
        var feedCount: Int { state.withLock { $0.consumers.count } }
        func stop() { source.stop() }
    }

    // MARK: - Feed

    /// One H.264 stream: a shared encoder made on the first frame (whose format and size it
    /// takes), or the camera's own H.264 passed through. Links subscribe to `fanOut`.
    /// Its users are counted by the `VideoFeeds` that made it.
    final class Feed: Sendable {
        let key: String
        let output: VideoFormat
        let capture: Capture
        let codec: SharedVideoCodec
        let fanOut: VideoFanOut

        private struct State {
            var encoder: SharedH264Encoder?
            var encoderInput: SharedH264Encoder.Input?
            var failure: String?
            var stopped = false
            var framesTaken = 0
        }
        private let state = Mutex(State())

        init(key: String, output: VideoFormat, capture: Capture, codec: SharedVideoCodec = .h264) {
            self.codec = codec
            self.key = key
            self.output = output
            self.capture = capture
            let box = FeedBox()
            // Links send each unit through their whole send path on the fan-out's lanes; an
            // H.264 feed makes each unit's RTP packets once, and its links send copies of them
            // (one payloader per feed, `RTPPackets`).
            let packetizer = codec == .h264 ? try? H264Packetizer() : nil
            fanOut = VideoFanOut(delivery: .perCore, packetizer: packetizer) { box.feed?.forceKeyFrame() }
            box.set(self)
        }

        /// Why the feed sends nothing (an encoder that could not be built), if it does not.
        var error: String? {
            let (failure, encoder) = state.withLock { ($0.failure, $0.encoder) }
            return failure ?? encoder?.error
        }
        var encoderStats: SharedH264Encoder.Statistics? { state.withLock { $0.encoder }?.stats }
        /// The fan-out's counts with the encoder's frames in and dropped at its input.
        var statistics: FanOutStatistics {
            var counts = fanOut.stats
            if let encoder = encoderStats {
                counts.encoderFrames = encoder.framesIn
                counts.encoderFramesDropped = encoder.framesDropped
            }
            return counts
        }
        var isPassThrough: Bool { state.withLock { $0.encoder == nil && $0.framesTaken > 0 && $0.failure == nil } }

        fileprivate func forceKeyFrame() { state.withLock { $0.encoder }?.forceKeyFrame() }

        /// One frame from the capture (its thread).
        func take(_ frame: Frame) {
            if frame.format == .h264, codec == .h265 {
                state.withLock { s in
                    if s.failure == nil { s.failure = "H.265 from an H.264 camera or clip is not supported (no transcoding)" }
                }
                return
            }
            if frame.format == .h265, codec == .h264 {
                state.withLock { s in
                    if s.failure == nil { s.failure = "H.264 from an H.265 camera or clip is not supported (no transcoding)" }
                }
                return
            }
            // A compressed stream of the feed's own codec is passed through (no encoder).
            if frame.format == .h264 || frame.format == .h265 {
                state.withLock { $0.framesTaken += 1 }
                frame.bytes.withUnsafeBytes { fanOut.deliver($0, isKeyFrame: frame.isKeyFrame) }
                return
            }
            let input: SharedH264Encoder.Input
            switch frame.format {
            case .i420 where frame.width == output.width && frame.height == output.height: input = .i420
            case .i420: input = .captured(.i420, width: frame.width, height: frame.height)
            case .nv12: input = .captured(.nv12, width: frame.width, height: frame.height)
            case .yuyv: input = .captured(.yuyv, width: frame.width, height: frame.height)
            case .mjpeg: input = .captured(.mjpeg, width: frame.width, height: frame.height)
            case .h264, .h265: return
            }
            guard let encoder = encoder(for: input) else { return }
            _ = frame.bytes.withUnsafeBytes { encoder.push($0) }
        }

        /// The encoder for this input, made (or remade, when the camera's format changed) here.
        private func encoder(for input: SharedH264Encoder.Input) -> SharedH264Encoder? {
            let (current, old): (SharedH264Encoder?, SharedH264Encoder?) = state.withLock { s in
                s.framesTaken += 1
                if s.stopped { return (nil, nil) }
                if s.encoderInput == input { return (s.encoder, nil) }
                defer {
                    s.encoder = nil
                    s.encoderInput = input
                }
                return (nil, s.encoder)
            }
            if let current { return current }
            old?.stop()
            guard state.withLock({ !$0.stopped && $0.encoder == nil && $0.failure == nil }) else { return nil }
            do {
                let made = try SharedH264Encoder(video: output, input: input, output: fanOut, codec: codec)
                try made.start()
                let keep: Bool = state.withLock { s in
                    guard !s.stopped, s.encoderInput == input else { return false }
                    s.encoder = made
                    return true
                }
                guard keep else {
                    made.stop()
                    return nil
                }
                // Links that joined before the encoder existed wait for its first key frame,
                // which an encoder makes at start anyway.
                return made
            } catch {
                state.withLock { $0.failure = "cannot encode \(input): \(error)" }
                return nil
            }
        }

        func stop() {
            let encoder: SharedH264Encoder? = state.withLock { s in
                s.stopped = true
                defer { s.encoder = nil }
                return s.encoder
            }
            encoder?.stop()
        }
    }

    /// The fan-out's key frame requests reach the feed through this: the fan-out is made before
    /// the feed exists, so the weak reference is set once the feed is made.
    private final class FeedBox: Sendable {
        private struct Weak { weak var feed: Feed? }
        private let target = Mutex(Weak())
        func set(_ feed: Feed) { target.withLock { $0.feed = feed } }
        var feed: Feed? { target.withLock { $0.feed } }
    }
}

extension Duration {
    var nanosecondsValue: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max : whole &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }
}
