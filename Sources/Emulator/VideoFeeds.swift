import Camera
import Dispatch
import Foundation
import WebRTCLink

/// Encode once, fan out (issue 11): per process, one capture per camera and one H.264 stream per
/// (camera, stream size), shared by every P2P link that sends it. A V4L2 camera is opened once
/// however many links (live view and a call) stream it; a clip or an H.264 camera is passed
/// through from its one reader, and so is an H.265 clip or camera (to the `fmp4Stream` channel).
/// A feed nobody uses lingers a little (a call that follows finds it warm), then stops, and its
/// capture with it when that was the last user.
public final class VideoFeeds: @unchecked Sendable {
    /// The process's feeds (what every device uses unless it is given others).
    public static let shared = VideoFeeds()

    /// How long a feed runs on after its last user left.
    var linger: Duration {
        get { lock.withLock { lingerDuration } }
        set { lock.withLock { lingerDuration = newValue } }
    }

    /// Whether a ringing call starts its main stream's feed (`P2PLink.prepare`): on in `ipcemu
    /// run` and the benchmark, off by default so that audio-only tests pay nothing.
    var preparesWhileRinging: Bool {
        get { lock.withLock { prepareOnRing } }
        set { lock.withLock { prepareOnRing = newValue } }
    }

    private let lock = NSLock()
    private var lingerDuration: Duration = .seconds(5)
    private var prepareOnRing = false
    private var captures: [String: Capture] = [:]
    private var feeds: [String: Feed] = [:]

    /// The driver V4L2 cameras are opened through (`.system`; a test gives the fake driver).
    private let v4l2Driver: V4L2Driver

    /// Feeds of their own (a test: its cameras behind a fake V4L2 driver, counts it owns).
    public init(v4l2Driver: V4L2Driver = .system) {
        self.v4l2Driver = v4l2Driver
    }

    /// A running feed of `camera` sent at `output` (the size an encoder makes; ignored when the
    /// camera delivers H.264). Balance with `release`.
    /// `codec` .h265: the feed for the `fmp4Stream` data channel (PROTOCOL.md 7), its own encoder
    /// on the same capture.
    func acquire(camera: CameraConfig, output: VideoFormat, codec: SharedVideoCodec = .h264) throws(CameraError) -> Feed {
        let captureKey = Self.captureKey(camera)
        let feedKey = "\(captureKey)|out \(output.width)x\(output.height)@\(output.fps)" + (codec == .h264 ? "" : " \(codec)")
        lock.lock()
        defer { lock.unlock() }
        if let feed = feeds[feedKey] {
            feed.users += 1
            feed.generation += 1
            return feed
        }
        let capture: Capture
        if let existing = captures[captureKey] {
            capture = existing
        } else {
            capture = Capture(key: captureKey, source: try camera.makeSource(v4l2Driver: v4l2Driver))
            try capture.start()
            captures[captureKey] = capture
        }
        let feed = Feed(key: feedKey, output: output, capture: capture, codec: codec)
        feed.users = 1
        feeds[feedKey] = feed
        capture.attach(feed)
        return feed
    }

    /// Gives a feed back; the last user's release stops it after `linger`.
    func release(_ feed: Feed) {
        let (generation, delay): (Int, Duration) = lock.withLock {
            feed.users = max(0, feed.users - 1)
            feed.generation += 1
            return (feed.generation, lingerDuration)
        }
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
        lock.withLock { feeds.values.filter { $0.key.contains(text) } }
    }

    /// Open captures and feeds (for tests and the benchmark).
    var counts: (captures: Int, feeds: Int) { lock.withLock { (captures.count, feeds.count) } }

    private func stopIfUnused(_ feed: Feed, generation: Int) {
        let captureToStop: Capture?? = lock.withLock {
            guard feed.users == 0, feed.generation == generation, feeds[feed.key] === feed else { return nil }
            feeds.removeValue(forKey: feed.key)
            let capture = feed.capture
            capture.detach(feed)
            guard capture.feedCount == 0 else { return .some(nil) }
            captures.removeValue(forKey: capture.key)
            return .some(capture)
        }
        guard let stop = captureToStop else { return }
        feed.stop()
        stop?.stop()
    }

    /// One capture per camera: kind, capture size, rate and format. The test pattern is drawn per
    /// stream size, so each of its sizes is its own capture.
    static func captureKey(_ camera: CameraConfig) -> String {
        "\(camera.kind) \(camera.width)x\(camera.height)@\(camera.fps) \(camera.preferredFormat?.rawValue ?? "any")"
    }

    // MARK: - Capture

    /// One started frame source and the feeds it feeds.
    final class Capture: @unchecked Sendable {
        let key: String
        let source: any FrameSource
        private let lock = NSLock()
        private var consumers: [ObjectIdentifier: Feed] = [:]
        private var lastStatus: FrameSourceStatus?
        private var statusWatchers: [Int: @Sendable (FrameSourceStatus) -> Void] = [:]
        private var nextWatcher = 0

        init(key: String, source: any FrameSource) {
            self.key = key
            self.source = source
        }

        func start() throws(CameraError) {
            try source.start { [weak self] event in
                guard let self else { return }
                switch event {
                case .frame(let frame):
                    let feeds = self.lock.withLock { Array(self.consumers.values) }
                    for feed in feeds { feed.take(frame) }
                case .status(let status):
                    let watchers = self.lock.withLock { () -> [@Sendable (FrameSourceStatus) -> Void] in
                        self.lastStatus = status
                        return Array(self.statusWatchers.values)
                    }
                    for watcher in watchers { watcher(status) }
                }
            }
        }

        /// What the source last said (live, no video and why, stopped); nil before it said anything.
        var status: FrameSourceStatus? { lock.withLock { lastStatus } }

        /// Calls `watcher` with the status the source last reported, if any (at once), then (on
        /// the capture's thread) with each status from now on (a camera unplugged and plugged
        /// back, issue 10); give the id back to `unwatchStatus`. The last status is handed over
        /// under the lock that also orders the source's reports, so the watcher sees them in order
        /// (`watcher` must not block).
        func watchStatus(_ watcher: @escaping @Sendable (FrameSourceStatus) -> Void) -> Int {
            lock.withLock {
                nextWatcher += 1
                statusWatchers[nextWatcher] = watcher
                if let lastStatus { watcher(lastStatus) }
                return nextWatcher
            }
        }

        func unwatchStatus(_ id: Int) { _ = lock.withLock { statusWatchers.removeValue(forKey: id) } }

        func attach(_ feed: Feed) { lock.withLock { consumers[ObjectIdentifier(feed)] = feed } }
        func detach(_ feed: Feed) { _ = lock.withLock { consumers.removeValue(forKey: ObjectIdentifier(feed)) } }
        var feedCount: Int { lock.withLock { consumers.count } }
        func stop() { source.stop() }
    }

    // MARK: - Feed

    /// One H.264 stream: a shared encoder made on the first frame (whose format and size it
    /// takes), or the camera's own H.264 passed through. Links subscribe to `fanOut`.
    final class Feed: @unchecked Sendable {
        let key: String
        let output: VideoFormat
        let capture: Capture
        let codec: SharedVideoCodec
        let fanOut: VideoFanOut
        // Guarded by VideoFeeds.lock.
        var users = 0
        var generation = 0

        private let lock = NSLock()
        private var encoder: SharedH264Encoder?
        private var encoderInput: SharedH264Encoder.Input?
        private var failure: String?
        private var stopped = false
        private var framesTaken = 0

        init(key: String, output: VideoFormat, capture: Capture, codec: SharedVideoCodec = .h264) {
            self.codec = codec
            self.key = key
            self.output = output
            self.capture = capture
            let box = FeedBox()
            fanOut = VideoFanOut { box.feed?.forceKeyFrame() }
            box.feed = self
        }

        /// Why the feed sends nothing (an encoder that could not be built), if it does not.
        var error: String? { lock.withLock { failure ?? encoder?.error } }
        var encoderStats: SharedH264Encoder.Statistics? { lock.withLock { encoder?.stats } }
        var isPassThrough: Bool { lock.withLock { encoder == nil && framesTaken > 0 && failure == nil } }

        fileprivate func forceKeyFrame() { lock.withLock { encoder }?.forceKeyFrame() }

        /// One frame from the capture (its thread).
        func take(_ frame: Frame) {
            if frame.format == .h264, codec == .h265 {
                lock.withLock { if failure == nil { failure = "H.265 from an H.264 camera or clip is not supported (no transcoding)" } }
                return
            }
            if frame.format == .h265, codec == .h264 {
                lock.withLock { if failure == nil { failure = "H.264 from an H.265 camera or clip is not supported (no transcoding)" } }
                return
            }
            // A compressed stream of the feed's own codec is passed through (no encoder).
            if frame.format == .h264 || frame.format == .h265 {
                lock.withLock { framesTaken += 1 }
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
            let (current, old): (SharedH264Encoder?, SharedH264Encoder?) = lock.withLock {
                framesTaken += 1
                if stopped { return (nil, nil) }
                if encoderInput == input { return (encoder, nil) }
                defer {
                    encoder = nil
                    encoderInput = input
                }
                return (nil, encoder)
            }
            if let current { return current }
            old?.stop()
            guard lock.withLock({ !stopped && encoder == nil && failure == nil }) else { return nil }
            do {
                let made = try SharedH264Encoder(video: output, input: input, output: fanOut, codec: codec)
                try made.start()
                let keep: Bool = lock.withLock {
                    guard !stopped, encoderInput == input else { return false }
                    encoder = made
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
                lock.withLock { failure = "cannot encode \(input): \(error)" }
                return nil
            }
        }

        func stop() {
            let encoder: SharedH264Encoder? = lock.withLock {
                stopped = true
                defer { self.encoder = nil }
                return self.encoder
            }
            encoder?.stop()
        }
    }

    private final class FeedBox: @unchecked Sendable {
        weak var feed: Feed?
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
