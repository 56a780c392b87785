import Dispatch
import Foundation
import Synchronization

/// What a finished left message is.
public struct MessageRecording: Sendable, Equatable {
    /// The MP4 file (complete: its `moov` is written, at the front).
    public var path: String
    /// The file's size.
    public var bytes: Int
    /// Video access units written (from the first key frame on).
    public var videoFrames: Int
    /// From the first access unit's arrival to the end of the last one (its arrival plus the mean
    /// frame interval), in milliseconds.
    public var durationMs: Int
    /// The sound recorded (`.none` for a video-only file).
    public var audio: MessageAudio
    /// The AAC encoder used, when there is sound.
    public var audioEncoder: String?

    /// Whole seconds, rounded (what DP 212's `duration` carries, PROTOCOL.md 8.5).
    public var durationSeconds: Int { max(0, (durationMs + 500) / 1000) }
}

/// Records a left message (PROTOCOL.md 8.5): `seconds` of encoded video (H.264, or H.265 from an
/// H.265 camera) and optionally AAC sound into an MP4 through GStreamer (`h264parse ! mp4mux
/// faststart=true ! filesink`).
///
/// It takes access units already encoded (DESIGN.md: never an encoder per call): the device
/// subscribes it to the shared feed's fan-out (the same H.264 the P2P links send), so a message
/// costs a muxer, not a second video encoder. The sound is the links' own source (the tone, or the
/// profile's ALSA microphone) through a short-lived AAC encoder. Frames are timestamped on
/// arrival (the pipeline's clock), as the sound is, so both tracks share one timeline.
///
/// Use: `start()`, feed `take(_:isKeyFrame:)` from the fan-out (deltas before the first key frame
/// are skipped; it returns false once `seconds` of video are in), `waitUntilFull`, then
/// `finish()`, which sends end of stream and waits until the muxer has written the file. `cancel()`
/// stops and removes the file. Thread-safe.
public final class MessageRecorder: Sendable {
    /// The encoded video taken.
    public enum VideoCodec: String, Sendable, Equatable {
        case h264, h265
    }

    /// Longest message (PROTOCOL.md 8.5: `doorbell.messageSeconds`, at most 10).
    public static let maximumSeconds = 10

    public let path: String
    public let seconds: Int
    public let codec: VideoCodec
    /// The sound actually recorded: `.none` when asked for none or no AAC encoder is installed.
    public let audio: MessageAudio
    public let audioEncoder: String?
    private let pipeline: GStreamerPipeline
    private let guarded = Mutex(Guarded())

    private struct Guarded {
        var state = State.built
        var firstAtNs: UInt64?
        var lastAtNs: UInt64?
        var frames = 0
        var full = false
        var fullWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        /// Waiters whose timeout came before they began to wait.
        var expired: Set<Int> = []
    }

    private enum State { case built, playing, ended }

    /// Builds the pipeline (nothing runs until `start`). `seconds` must be 1-10; the folder of
    /// `path` must exist.
    public init(path: String, seconds: Int, codec: VideoCodec = .h264, audio: MessageAudio = .none) throws(CameraError) {
        guard (1...Self.maximumSeconds).contains(seconds) else {
            throw .invalidConfig("a message of \(seconds) s: needs 1 to \(Self.maximumSeconds)")
        }
        guard !path.isEmpty else { throw .invalidConfig("a message needs a file path") }
        self.path = path
        self.seconds = seconds
        self.codec = codec
        let encoder = audio == .none ? nil : MessageAudio.aacEncoder
        self.audio = encoder == nil ? .none : audio
        audioEncoder = encoder
        let parse = codec == .h264 ? "h264parse" : "h265parse"
        var description = "appsrc name=src is-live=true do-timestamp=true format=time max-bytes=0"
            + " caps=\"video/x-\(codec.rawValue),stream-format=byte-stream,alignment=au\""
            + " ! \(parse) ! queue ! mux. "
        if let encoder, let source = self.audio.sourceDescription(seconds: seconds) {
            description += source + " ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=1"
                + " ! \(encoder) ! aacparse ! queue ! mux. "
        }
        description += "mp4mux name=mux faststart=true ! filesink location=\(Self.quoted(path))"
        pipeline = try GStreamerPipeline(description)
    }

    deinit {
        pipeline.stop()
    }

    /// Plays the pipeline (the sound starts now; the video at the first key frame taken).
    public func start() throws(CameraError) {
        let mayStart = guarded.withLock { g -> Bool in
            guard g.state == .built else { return false }
            g.state = .playing
            return true
        }
        guard mayStart else { throw .alreadyStarted }
        do {
            try pipeline.play()
        } catch {
            guarded.withLock { $0.state = .ended }
            pipeline.stop()
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// One access unit (Annex B), borrowed for the call. Deltas before the first key frame are
    /// skipped. Returns false once the message has `seconds` of video (or has ended): the caller
    /// may unsubscribe.
    @discardableResult
    public func take(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool) -> Bool {
        let now = Clocks.monotonicNs()
        let (push, more, waiters): (Bool, Bool, [CheckedContinuation<Void, Never>]) = guarded.withLock { g in
            guard g.state == .playing, !g.full else { return (false, false, []) }
            guard let first = g.firstAtNs ?? (isKeyFrame ? now : nil) else { return (false, true, []) }
            if now &- first >= UInt64(seconds) * 1_000_000_000 {
                g.full = true
                defer { g.fullWaiters = [:] }
                return (false, false, Array(g.fullWaiters.values))
            }
            g.firstAtNs = first
            g.lastAtNs = now
            g.frames += 1
            return (true, true, [])
        }
        for waiter in waiters { waiter.resume() }
        guard push else { return more }
        let bytes = [UInt8](accessUnit)
        do {
            try pipeline.push(bytes)
        } catch {
            // The pipeline failed (its error comes out of `finish`): take nothing more.
            markFull()
            return false
        }
        return true
    }

    @discardableResult
    public func take(_ accessUnit: [UInt8], isKeyFrame: Bool) -> Bool {
        accessUnit.withUnsafeBytes { take($0, isKeyFrame: isKeyFrame) }
    }

    /// Whether `seconds` of video are in.
    public var isFull: Bool { guarded.withLock { $0.full } }

    /// Video access units taken so far.
    public var framesTaken: Int { guarded.withLock { $0.frames } }

    /// Waits until `seconds` of video are in; false after `timeout` (a camera that sends nothing:
    /// `finish` then ends the file with what it has, or throws when it has nothing).
    public func waitUntilFull(timeout: Duration) async -> Bool {
        let id = guarded.withLock { g -> Int in
            g.nextWaiter += 1
            return g.nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.wake(id)
        }
        defer {
            timer.cancel()
            guarded.withLock { _ = $0.expired.remove(id) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = guarded.withLock { g -> Bool in
                if g.full || g.state != .playing || g.expired.remove(id) != nil { return true }
                g.fullWaiters[id] = continuation
                return false
            }
            if now { continuation.resume() }
        }
        return isFull
    }

    /// Resumes one waiter (its timeout), if it still waits.
    private func wake(_ id: Int) {
        guarded.withLock { g -> CheckedContinuation<Void, Never>? in
            guard let waiter = g.fullWaiters.removeValue(forKey: id) else {
                g.expired.insert(id)
                return nil
            }
            return waiter
        }?.resume()
    }

    private func wakeWaiters() {
        let waiters = guarded.withLock { g -> [CheckedContinuation<Void, Never>] in
            defer { g.fullWaiters = [:] }
            return Array(g.fullWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func markFull() {
        let waiters = guarded.withLock { g -> [CheckedContinuation<Void, Never>] in
            g.full = true
            defer { g.fullWaiters = [:] }
            return Array(g.fullWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends the file: end of stream into the video (the sound ends by itself after `seconds`), then
    /// waits, at most `timeout`, until the muxer has written it whole. Blocks the calling thread
    /// (see `finished(timeout:)`). Throws, and removes the file, when no video came or GStreamer
    /// failed.
    public func finish(timeout: Duration = .seconds(15)) throws(CameraError) -> MessageRecording {
        let (wasPlaying, frames, first, last) = guarded.withLock { g -> (Bool, Int, UInt64?, UInt64?) in
            let was = g.state == .playing
            g.state = .ended
            g.full = true
            return (was, g.frames, g.firstAtNs, g.lastAtNs)
        }
        wakeWaiters()
        guard wasPlaying else { throw .encoder("the message recorder was not recording") }
        defer { pipeline.stop() }
        guard frames > 0, let first, let last else {
            pipeline.stop()
            try? FileManager.default.removeItem(atPath: path)
            throw .encoder("no video came from the camera for the message")
        }
        do {
            try pipeline.endOfStream()
            try pipeline.waitForEnd(timeoutNs: Self.nanoseconds(timeout))
        } catch {
            pipeline.stop()
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
        pipeline.stop()
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        let span = last &- first
        let interval = frames > 1 ? span / UInt64(frames - 1) : 0
        return MessageRecording(
            path: path, bytes: size, videoFrames: frames, durationMs: Int((span &+ interval) / 1_000_000),
            audio: audio, audioEncoder: audioEncoder)
    }

    /// `finish` off the cooperative threads.
    public func finished(timeout: Duration = .seconds(15)) async throws(CameraError) -> MessageRecording {
        let result: Result<MessageRecording, CameraError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(CameraError) {
                    continuation.resume(returning: .success(try self.finish(timeout: timeout)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Stops without finishing; the partial file is removed.
    public func cancel() {
        guarded.withLock { g in
            g.state = .ended
            g.full = true
        }
        wakeWaiters()
        pipeline.stop()
        try? FileManager.default.removeItem(atPath: path)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max : whole &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }

    /// A gst-launch string value: quoted, with backslashes and quotes escaped.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
