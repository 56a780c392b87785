import Camera
import Dispatch
import DeviceProfile
import Foundation
import WebRTCLink

/// Taking a device's snapshots and messages from its camera (PROTOCOL.md 8.5), through the
/// process's shared feeds (DESIGN.md: one capture and one encoder per camera and stream size):
/// a snapshot is the next key frame of the main stream's shared H.264 (or H.265) feed, decoded
/// and encoded to a JPEG of at most 100,000 bytes; a message subscribes a `MessageRecorder` to
/// that same feed for its seconds (a muxer, never a second video encoder). A feed that was not
/// running starts for the capture and lingers after it as the links' feeds do.
extension DeviceMediaStore {
    /// PROTOCOL.md 8.5: the largest snapshot.
    public static let snapshotMaxBytes = 100_000

    /// The press snapshot `press-<callId>.jpg`; nil when it could not be taken (counted, with the
    /// reason in `stats.lastFailure`). The device goes on without it.
    public func takePressSnapshot(callId: String, profile: DeviceProfile, feeds: VideoFeeds = .shared,
                                  timeout: Duration = .seconds(3)) async -> MediaRef? {
        await captured { () async throws(MediaCaptureError) -> MediaRef in
            try await self.snapshot(name: Self.pressSnapshotName(callId: callId), profile: profile, feeds: feeds, timeout: timeout)
        }
    }

    /// A motion snapshot `motion-<unix s>.jpg` (DP 115); nil when it could not be taken.
    public func takeMotionSnapshot(unixSeconds: Int64, profile: DeviceProfile, feeds: VideoFeeds = .shared,
                                   timeout: Duration = .seconds(3)) async -> MediaRef? {
        await captured { () async throws(MediaCaptureError) -> MediaRef in
            try await self.snapshot(name: Self.motionSnapshotName(unixSeconds: unixSeconds), profile: profile, feeds: feeds,
                                    timeout: timeout)
        }
    }

    /// The left message `message-<callId>.mp4`: `seconds` (1-10) of the camera, with the
    /// profile's sound (tone or microphone) when it has audio and an AAC encoder is installed.
    /// Returns when the file is complete (about `seconds` after the call, plus the first key
    /// frame's wait and the muxer's end); nil when it could not be recorded.
    public func recordMessage(callId: String, seconds: Int, profile: DeviceProfile, feeds: VideoFeeds = .shared) async
        -> MediaRef?
    {
        await captured { () async throws(MediaCaptureError) -> MediaRef in
            try await self.message(name: Self.messageName(callId: callId), seconds: seconds, profile: profile, feeds: feeds)
        }
    }

    private func captured(_ take: () async throws(MediaCaptureError) -> MediaRef) async -> MediaRef? {
        do throws(MediaCaptureError) {
            return try await take()
        } catch {
            noteCaptureFailure(error)
            return nil
        }
    }

    // MARK: Snapshot

    /// Takes a bounded JPEG of the main stream's next key frame and stores it as `name`.
    public func snapshot(name: String, profile: DeviceProfile, feeds: VideoFeeds = .shared,
                         timeout: Duration = .seconds(3)) async throws(MediaCaptureError) -> MediaRef {
        do { try Self.validate(name: name) } catch { throw .store(error) }
        let frame = try await Self.keyFrame(profile: profile, feeds: feeds, timeout: timeout)
        let jpeg: Result<BoundedJPEG, CameraError> = await Self.offCooperativeThreads {
            Result { () throws(CameraError) -> BoundedJPEG in try Snapshot.boundedJPEG(of: frame, maxBytes: Self.snapshotMaxBytes) }
        }
        let image: BoundedJPEG
        switch jpeg {
        case .success(let made): image = made
        case .failure(let error): throw .coding("\(error)")
        }
        do { return try store(image.bytes, name: name) } catch { throw .store(error) }
    }

    /// The next key frame of the profile's main stream, as the shared feed encodes it.
    static func keyFrame(profile: DeviceProfile, feeds: VideoFeeds, timeout: Duration) async throws(MediaCaptureError) -> Frame {
        guard profile.capabilities.video != nil else { throw .noCamera }
        let (camera, output) = P2PLink.feedRequest(profile: profile, stream: .main)
        let codec = Self.codec(of: camera)
        let feed: VideoFeeds.Feed
        do { feed = try feeds.acquire(camera: camera, output: output, codec: codec) } catch { throw .noVideo("\(error)") }
        defer { feeds.release(feed) }
        let (keyFrames, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // A new subscriber starts at a key frame, which subscribing asks the encoder for.
        let subscription = feed.fanOut.subscribe { accessUnit, isKeyFrame in
            guard isKeyFrame else { return }
            continuation.yield([UInt8](accessUnit))
            continuation.finish()
        }
        defer { feed.fanOut.unsubscribe(subscription) }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            continuation.finish()
        }
        defer { timer.cancel() }
        var bytes: [UInt8]?
        for await accessUnit in keyFrames {
            bytes = accessUnit
            break
        }
        guard let bytes else {
            throw .noVideo(feed.error ?? "no key frame from \(camera.kind) within \(timeout)")
        }
        return Frame(format: codec == .h265 ? .h265 : .h264, width: output.width, height: output.height, bytes: bytes,
                     captureTimeMs: Clocks.unixMs(), timestampNs: 0, sequence: 0, isKeyFrame: true)
    }

    /// The codec a camera's feed carries: H.265 for an H.265 clip or camera (passed through, never
    /// transcoded), H.264 otherwise.
    static func codec(of camera: CameraConfig) -> SharedVideoCodec {
        if camera.preferredFormat == .h265 { return .h265 }
        if case .clip(let path) = camera.kind, (try? CameraConfig.clipIsH265(path)) == true { return .h265 }
        return .h264
    }

    // MARK: Message

    /// Records `seconds` of the main stream's shared feed (and the profile's sound) and stores it as `name`.
    public func message(name: String, seconds: Int, profile: DeviceProfile, feeds: VideoFeeds = .shared) async
        throws(MediaCaptureError) -> MediaRef
    {
        do {
            try Self.validate(name: name)
            try makeDirectory()
        } catch {
            throw .store(error)
        }
        guard profile.capabilities.video != nil else { throw .noCamera }
        let (camera, output) = P2PLink.feedRequest(profile: profile, stream: .main)
        let codec = Self.codec(of: camera)
        let feed: VideoFeeds.Feed
        do { feed = try feeds.acquire(camera: camera, output: output, codec: codec) } catch { throw .noVideo("\(error)") }
        let recorder: MessageRecorder
        do {
            // The sound starts with the recorder, the video at the feed's next key frame.
            recorder = try Self.startedRecorder(path: temporaryPath(for: name), seconds: seconds,
                                                codec: codec == .h265 ? .h265 : .h264, audio: Self.messageAudio(profile))
        } catch {
            feeds.release(feed)
            throw error
        }
        let subscription = feed.fanOut.subscribe { accessUnit, isKeyFrame in
            recorder.take(accessUnit, isKeyFrame: isKeyFrame)
        }
        _ = await recorder.waitUntilFull(timeout: .seconds(seconds) + .seconds(5))
        feed.fanOut.unsubscribe(subscription)
        let feedError = feed.error
        feeds.release(feed)
        let recording: MessageRecording
        do {
            recording = try await recorder.finished()
        } catch {
            throw feedError.map { .noVideo($0) } ?? .coding("\(error)")
        }
        do {
            return try storeFile(at: recording.path, name: name, durationSeconds: recording.durationSeconds)
        } catch {
            throw .store(error)
        }
    }

    /// The sound of a message: none without `capabilities.audio`, else the profile's source.
    static func messageAudio(_ profile: DeviceProfile) -> MessageAudio {
        guard profile.capabilities.audio != nil else { return .none }
        switch profile.audio.source {
        case .tone: return .tone
        case .alsa(let device): return .alsa(device: device)
        }
    }

    /// A started recorder; a microphone that does not open falls back to the tone (as a link's does).
    static func startedRecorder(path: String, seconds: Int, codec: MessageRecorder.VideoCodec, audio: MessageAudio)
        throws(MediaCaptureError) -> MessageRecorder
    {
        let clamped = min(MessageRecorder.maximumSeconds, max(1, seconds))
        do {
            let recorder = try MessageRecorder(path: path, seconds: clamped, codec: codec, audio: audio)
            try recorder.start()
            return recorder
        } catch {
            guard case .alsa = audio else { throw .coding("\(error)") }
        }
        do {
            let recorder = try MessageRecorder(path: path, seconds: clamped, codec: codec, audio: .tone)
            try recorder.start()
            return recorder
        } catch {
            throw .coding("\(error)")
        }
    }

    /// Runs blocking GStreamer work on a Dispatch thread.
    static func offCooperativeThreads<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
