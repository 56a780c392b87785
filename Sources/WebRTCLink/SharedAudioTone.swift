// The 440 Hz test tone as PCMA, made once per process and handed to every link that sends it
// (issue 24 item 5: a tone per link cost each link a source thread, a clock wait and an encoder per
// 128 ms buffer). Links take it through `PeerCore`'s pushed audio pad, on the fan-out's delivery
// lanes. Starts with its first subscriber and stops `linger` after its last.
import Dispatch
import Foundation
import Synchronization
import CGstWebRTC

public final class SharedAudioTone: Sendable {
    /// The tone every link of this process sends as PCMA at 8 kHz.
    public static let pcma = SharedAudioTone()

    /// Caps of what it hands out (one buffer of 1,024 samples, 128 ms, at a time).
    static let caps = "audio/x-alaw,rate=8000,channels=1"
    static let description = "audiotestsrc is-live=true wave=sine freq=440 volume=0.2 samplesperbuffer=1024"
        + " ! audioconvert ! audioresample ! audio/x-raw,rate=8000,channels=1 ! alawenc"
        + " ! appsink name=encoded sync=false async=false max-buffers=8 drop=true"

    /// Every buffer is a "key frame": a subscriber starts with the next one.
    let fanOut = VideoFanOut(minimumKeyFrameSpacing: .zero, recentLimit: .none, delivery: .perCore, forceKeyFrame: nil)
    /// How long the tone runs on without subscribers (the next call finds it playing).
    let linger: Duration

    private struct State {
        var pipeline: GstRef?
        var subscribers = 0
        /// Bumped at every subscribe, so a stop scheduled before it does nothing.
        var generation = 0
        var failure: String?
    }
    private let state = Mutex(State())

    init(linger: Duration = .seconds(5)) { self.linger = linger }

    /// Adds a subscriber (starting the tone if it is not playing); nil with the reason when the
    /// tone's pipeline cannot be built.
    func subscribe(_ handler: @escaping VideoFanOut.Handler) -> Result<Int, WebRTCLinkError> {
        let needsStart: Bool = state.withLock { s in
            s.subscribers += 1
            s.generation += 1
            return s.pipeline == nil
        }
        if needsStart, let problem = start() {
            state.withLock { $0.subscribers -= 1 }
            return .failure(problem)
        }
        return .success(fanOut.subscribe(handler))
    }

    func unsubscribe(_ id: Int) {
        fanOut.unsubscribe(id)
        let generation: Int? = state.withLock { s in
            s.subscribers = max(0, s.subscribers - 1)
            return s.subscribers == 0 ? s.generation : nil
        }
        guard let generation else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: linger.nanoseconds))) { [self] in
            let pipeline: GstRef? = state.withLock { s in
                guard s.subscribers == 0, s.generation == generation else { return nil }
                defer { s.pipeline = nil }
                return s.pipeline
            }
            if let pipeline {
                cgw_pipeline_stop(pipeline.pointer)
                cgw_element_unref(pipeline.pointer)
            }
        }
    }

    /// Whether the tone's pipeline is playing (tests).
    var isPlaying: Bool { state.withLock { $0.pipeline != nil } }

    /// Builds and plays the pipeline unless another thread did; the reason when it cannot.
    private func start() -> WebRTCLinkError? {
        do { try GStreamerRuntime.start() } catch { return error }
        var error: UnsafeMutablePointer<CChar>?
        guard let pipeline = cgw_pipeline_new_uncounted(Self.description, &error) else {
            return .pipeline(takeCString(error))
        }
        guard let sink = cgw_bin_get_child(pipeline, "encoded") else {
            cgw_element_unref(pipeline)
            return .pipeline("the shared tone's pipeline has no appsink")
        }
        _ = cgw_appsink_on_buffer(sink, onToneBuffer, Unmanaged.passRetained(ToneBox(self)).toOpaque(), releaseToneBox)
        cgw_element_unref(sink)
        let ref = GstRef(pipeline)
        let won: Bool = state.withLock { s in
            guard s.pipeline == nil else { return false }
            s.pipeline = ref
            return true
        }
        guard won else {
            cgw_element_unref(pipeline)
            return nil
        }
        guard cgw_pipeline_play(pipeline) else {
            state.withLock { $0.pipeline = nil }
            cgw_pipeline_stop(pipeline)
            cgw_element_unref(pipeline)
            return .pipeline("the shared tone refused to play")
        }
        return nil
    }
}

/// What C holds for the tone: a weak reference.
private final class ToneBox: Sendable {
    weak let tone: SharedAudioTone?
    init(_ tone: SharedAudioTone) { self.tone = tone }
}

private func releaseToneBox(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ToneBox>.fromOpaque(context).release()
}

private func onToneBuffer(
    _ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int, _ pts: Int64, _ key: Bool
) {
    guard let context, let bytes, length > 0,
          let tone = Unmanaged<ToneBox>.fromOpaque(context).takeUnretainedValue().tone
    else { return }
    tone.fanOut.deliver(UnsafeRawBufferPointer(start: bytes, count: length), isKeyFrame: true)
}
