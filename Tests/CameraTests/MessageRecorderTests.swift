import Camera
import CameraTestSupport
import Foundation
import Testing
import TestSupport

/// PROTOCOL.md 8.5 left messages: the stamped test pattern (section 6), encoded once as the shared
/// feed would (x264enc here stands in for it), recorded to MP4 and read back frame by frame.
@Suite("Left message recorder", .serialized, .heavy)
struct MessageRecorderTests {
    /// The stamped pattern at 30 fps in real time, through one x264enc, handed out as access units
    /// (what `VideoFanOut` gives a subscriber).
    final class StampedH264: @unchecked Sendable {
        let source: TestPatternSource
        let encoder: GStreamerPipeline
        private let lock = NSLock()
        private var stopped = false
        private var handler: (@Sendable ([UInt8], Bool) -> Void)?
        private let drained = DispatchSemaphore(value: 0)

        init(width: Int = 640, height: Int = 360, fps: Double = 30) throws {
            source = try TestPatternSource(width: width, height: height, fps: fps)
            let caps = FrameCaps.caps(format: .i420, width: width, height: height, fps: fps)
            encoder = try GStreamerPipeline(
                "appsrc name=src is-live=true format=time caps=\"\(caps)\" ! x264enc tune=zerolatency speed-preset=ultrafast "
                    + "key-int-max=60 bitrate=1500 ! video/x-h264,profile=constrained-baseline ! h264parse config-interval=-1 ! "
                    + "video/x-h264,stream-format=byte-stream,alignment=au ! appsink name=sink sync=false")
        }

        func start(_ handler: @escaping @Sendable ([UInt8], Bool) -> Void) throws {
            lock.withLock { self.handler = handler }
            try encoder.play()
            let thread = Thread { [self] in
                while !lock.withLock({ stopped }) {
                    guard let sample = try? self.encoder.pull(timeoutNs: 100_000_000) else { continue }
                    let deliver = lock.withLock { self.handler }
                    deliver?(sample.bytes, H264AnnexB.containsIDR(sample.bytes))
                }
                drained.signal()
            }
            thread.start()
            let encoder = self.encoder
            try source.start { event in
                if case .frame(let frame) = event {
                    try? encoder.push(frame.bytes, ptsNs: frame.timestampNs, durationNs: 33_333_333)
                }
            }
        }

        func stop() {
            source.stop()
            lock.withLock {
                stopped = true
                handler = nil
            }
            drained.wait()
            encoder.stop()
        }
    }

    /// The decoded pictures of an MP4's video track: stamp counters and presentation times.
    static func decodedVideo(_ path: String) async throws -> (counters: [UInt16], ptsNs: [UInt64]) {
        try await StampDecoding.mp4Video(path)
    }

    /// Seconds of decoded sound in the MP4's audio track (48 kHz mono S16).
    static func decodedAudioSeconds(_ path: String) throws -> Double {
        let pipeline = try GStreamerPipeline(
            "filesrc location=\"\(path)\" ! qtdemux name=d d.audio_0 ! queue ! aacparse ! avdec_aac ! audioconvert ! "
                + "audioresample ! audio/x-raw,format=S16LE,channels=1,rate=48000 ! appsink name=sink sync=false")
        try pipeline.play()
        defer { pipeline.stop() }
        var bytes = 0
        while let sample = try pipeline.pull(timeoutNs: 10_000_000_000) { bytes += sample.bytes.count }
        return Double(bytes) / 2 / 48_000
    }

    /// The file's top-level MP4 boxes, in order.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var boxes: [String] = []
        var offset = 0
        while offset + 8 <= data.count {
            var size = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            boxes.append(String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self))
            if size == 1, offset + 16 <= data.count {
                size = data[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | Int($1) }
            }
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    /// Records `seconds` of the stamped feed; returns the recording and the wall time it took.
    static func record(seconds: Int, audio: MessageAudio, to path: String) async throws -> (MessageRecording, Duration) {
        let feed = try StampedH264()
        let recorder = try MessageRecorder(path: path, seconds: seconds, audio: audio)
        let clock = ContinuousClock()
        let began = clock.now
        try recorder.start()
        try feed.start { bytes, key in recorder.take(bytes, isKeyFrame: key) }
        let full = await recorder.waitUntilFull(timeout: .seconds(seconds + 10))
        feed.stop()
        #expect(full)
        let recording = try await recorder.finished()
        return (recording, clock.now - began)
    }

    @Test("3 s of the stamped pattern: a complete MP4 (moov first) whose every frame's stamp reads back, in order")
    func threeSeconds() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "mp4mux", "qtdemux", "avdec_h264"]))
        let path = TestEnvironment.temporaryPath("message-3s.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (recording, took) = try await Self.record(seconds: 3, audio: .none, to: path)
        print("message 3 s, no audio: recorded in \(took), \(recording.bytes) bytes, \(recording.videoFrames) frames, \(recording.durationMs) ms")
        #expect(recording.audio == .none)
        #expect(recording.durationSeconds == 3)
        #expect(recording.bytes > 10_000)
        let boxes = try Self.topLevelBoxes(path)
        let moov = try #require(boxes.firstIndex(of: "moov"))
        let mdat = try #require(boxes.firstIndex(of: "mdat"))
        #expect(moov < mdat, "faststart puts the index before the media: \(boxes)")
        let video = try await Self.decodedVideo(path)
        // 30 fps for 3 s, from the first key frame on.
        #expect((80...95).contains(video.counters.count), "\(video.counters.count) frames")
        #expect(video.counters.count == recording.videoFrames)
        let gaps = zip(video.counters.dropFirst(), video.counters).map { (Int($0) - Int($1) + 4096) % 4096 }
        #expect(gaps.allSatisfy { $0 >= 1 && $0 <= 3 }, "counter gaps \(gaps)")
        let span = Double((video.ptsNs.last ?? 0) &- (video.ptsNs.first ?? 0)) / 1e9
        #expect(span > 2.7 && span < 3.2, "video spans \(span) s")
    }

    @Test("with sound: an AAC track of about the message's length beside the video")
    func withTone() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "mp4mux", "qtdemux", "avdec_h264", "avdec_aac", "aacparse"]))
        let encoder = try #require(MessageAudio.aacEncoder, "no AAC encoder (voaacenc or avenc_aac) installed")
        let path = TestEnvironment.temporaryPath("message-tone.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (recording, took) = try await Self.record(seconds: 3, audio: .tone, to: path)
        print("message 3 s, tone via \(encoder): recorded in \(took), \(recording.bytes) bytes")
        #expect(recording.audio == .tone)
        #expect(recording.audioEncoder == encoder)
        let sound = try await offThePool { try Self.decodedAudioSeconds(path) }
        #expect(sound > 2.7 && sound < 3.3, "\(sound) s of sound")
        let video = try await Self.decodedVideo(path)
        #expect((80...95).contains(video.counters.count), "\(video.counters.count) frames")
    }

    @Test("10 s, the longest message: complete, and done within a second of its length")
    func tenSeconds() async throws {
        try #require(GStreamerPipeline.hasElements(["x264enc", "mp4mux", "qtdemux", "avdec_h264"]))
        let path = TestEnvironment.temporaryPath("message-10s.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let audio: MessageAudio = MessageAudio.aacEncoder == nil ? .none : .tone
        let (recording, took) = try await Self.record(seconds: 10, audio: audio, to: path)
        print("message 10 s, \(audio): recorded in \(took), \(recording.bytes) bytes, \(recording.videoFrames) frames")
        #expect(recording.durationSeconds == 10)
        #expect(took < .seconds(12))
        let video = try await Self.decodedVideo(path)
        #expect((280...305).contains(video.counters.count), "\(video.counters.count) frames")
    }

    @Test("refusals: 0 or 11 s; no video at all ends with an error and no file; deltas before the first key frame are skipped")
    func refusals() async throws {
        let path = TestEnvironment.temporaryPath("message-bad.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: CameraError.invalidConfig("a message of 0 s: needs 1 to 10")) { try MessageRecorder(path: path, seconds: 0) }
        #expect(throws: CameraError.self) { try MessageRecorder(path: path, seconds: 11) }
        let recorder = try MessageRecorder(path: path, seconds: 1)
        try recorder.start()
        #expect(throws: CameraError.alreadyStarted) { try recorder.start() }
        #expect(recorder.take([0, 0, 0, 1, 0x41, 0x9A], isKeyFrame: false))  // skipped, more wanted
        #expect(recorder.framesTaken == 0)
        #expect(await recorder.waitUntilFull(timeout: .milliseconds(50)) == false)
        await #expect(throws: CameraError.self) { try await recorder.finished() }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(recorder.take([0, 0, 0, 1, 0x65, 0x88], isKeyFrame: true) == false)  // ended: takes nothing
    }
}
