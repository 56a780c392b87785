import Camera
import Dispatch
import Foundation
import IPCWire
import Synchronization
import WebRTCLink

/// The app's side of one P2P link (PROTOCOL.md 4): a webrtcbin offerer that receives the device's
/// video (and audio), decodes it, and reads every frame's stamp. Optionally sends its own video
/// (two-way: a screen IPC shows the caller).
final class AppVideoLink: Sendable {
    let sessionId: String
    let devId: String
    /// Sent as the offer's `tid` and echoed by the device: tells this link's replies from those
    /// to an earlier offer of the same session.
    let transactionId = String(UInt64.random(in: 0...UInt64.max), radix: 16)
    let offerer: WebRTCOfferer
    let signals: AsyncStream<Signal>
    private let continuation: AsyncStream<Signal>.Continuation
    private let measured: LockedStats

    typealias Signal = AppLinkSignal

    private let steps: LockedTimeline

    /// PROTOCOL.md 7: the video comes as HEVC over the `fmp4Stream` data channel (nil: RTP).
    let hevc: AppHEVCReceiver?

    /// The servers the offer's `token` names and this link's own ICE uses (PROTOCOL.md 4, 9.4).
    let ice: AppICEConfiguration

    /// The tuning its offerer's options carry (`bench media`'s A/B switches).
    var tuning: AppLinkTuning {
        let options = offerer.options
        return AppLinkTuning(aggressiveNomination: options.aggressiveNomination,
                             jitterBufferStartsAfterQueuedEvents: options.jitterBufferStartsAfterQueuedEvents)
    }

    init(sessionId: String, devId: String, sendsVideo: VideoFormat?, answeredAt: Date?, saveFramesTo: String?,
         decodes: Bool = true, hevc wantsHEVC: Bool = false, ice: AppICEConfiguration = AppICEConfiguration(),
         tuning: AppLinkTuning = AppLinkTuning()) {
        self.sessionId = sessionId
        self.devId = devId
        self.ice = ice
        let (stream, continuation) = AsyncStream<Signal>.makeStream(bufferingPolicy: .unbounded)
        signals = stream
        self.continuation = continuation
        let measured = LockedStats()
        self.measured = measured
        let steps = LockedTimeline()
        steps.record(\.opened)
        self.steps = steps
        let saver = saveFramesTo.map { FrameSaver(directory: $0) }
        measured.setAnsweredAt(answeredAt)
        if let answeredAt { steps.set(\.callAnswered, to: answeredAt) }
        let onFrame: @Sendable (DecodedVideoFrame) -> Void = { frame in
            measured.add(frame)
            saver?.save(frame)
        }
        let receiver = wantsHEVC ? AppHEVCReceiver(onFrame: onFrame) : nil
        hevc = receiver
        var dataChannel: (@Sendable (WebRTCDataChannel) -> Void)?
        if let receiver { dataChannel = { channel in receiver.attach(channel) } }
        let events = LinkEvents(
            localDescription: {
                steps.record(\.offerMade)
                continuation.yield(.offer(sdp: $0))
            },
            localCandidate: { continuation.yield(.candidate(line: $0.candidate, mLineIndex: $0.sdpMLineIndex)) },
            stateChanged: {
                if $0 == .connected { steps.record(\.connected) }
                continuation.yield(.state($0))
            },
            videoFrame: onFrame,
            dataChannel: dataChannel,
            videoReceiveStep: { step in
                switch step {
                case .iceConnected: steps.record(\.iceConnected)
                case .firstPacket: steps.record(\.firstVideoPacket)
                case .branchLinked: steps.record(\.receiveBranchLinked)
                }
            })
        // A 10 ms jitter buffer: like a browser's adaptive one on a clean network (loopback, LAN),
        // it does not hold the first frame back (LinkOptions.jitterBufferFastStartPackets: it
        // starts with the first packets, not 10 ms after them). GStreamer 1.22's rtpjitterbuffer
        // checks its fast start only as packets arrive: when a whole first frame arrives before its
        // own thread has pushed the stream's start events, the frame waits for the latency instead
        // (docs/webrtc.md, "First frame, third pass": 8-9 calls of 60), so the latency is kept
        // short; loopback and a LAN do not reorder packets by 10 ms. HEVC: audio and the
        // fmp4Stream channel, no RTP video.
        let configuration = wantsHEVC
            ? OfferConfiguration(receivesRTPVideo: false, dataChannels: [FMP4ControlMessage.channelLabel])
            : OfferConfiguration(sendsVideo: sendsVideo, decodesVideo: decodes, sendsPushedFrames: sendsVideo != nil,
                                 sendsAudio: sendsVideo != nil)
        // Aggressive ICE nomination: the app controls ICE (it offers), and with webrtcbin's regular
        // nomination the first valid pair is nominated two pacing ticks after it answered (10 ms of
        // the 17 from the device's candidates to ICE connected on loopback). `tuning` can give the
        // links back webrtcbin's regular nomination and the jitter buffer's start race, to compare
        // (`bench media --app-regular-nomination --app-jitterbuffer-race`; docs/webrtc.md, "First
        // frame, fifth pass").
        let options = LinkOptions(iceServers: ice.linkServers, jitterBufferMs: 10, relayOnly: ice.relayOnly,
                                  aggressiveNomination: tuning.aggressiveNomination,
                                  jitterBufferStartsAfterQueuedEvents: tuning.jitterBufferStartsAfterQueuedEvents)
        let offerer = WebRTCOfferer(configuration: configuration, options: options, events: events)
        self.offerer = offerer
        // Two-way: the app sends the stamped test pattern (PROTOCOL.md 6), so the device's screen
        // (a recording, a window) can be read back frame by frame.
        if let video = sendsVideo, let source = try? TestPatternSource(width: video.width, height: video.height, fps: Double(video.fps)) {
            try? source.start { event in
                guard case .frame(let frame) = event else { return }
                offerer.pushVideoFrame(frame.bytes, width: frame.width, height: frame.height, ptsNanos: Int64(frame.timestampNs))
            }
            pattern = source
        } else {
            pattern = nil
        }
    }

    /// The stamped pattern the app sends (two-way calls).
    private let pattern: TestPatternSource?

    /// The device's 302 answer came now (live view has no 308 answer to time from).
    func answerArrived() { steps.record(\.answerReceived) }
    /// One of the device's candidates came now (the first is kept).
    func remoteCandidateArrived() { steps.record(\.firstRemoteCandidate) }
    var answerArrivedAt: Date? { steps.snapshot.answerReceived }
    /// When each step of this link happened so far.
    var timeline: LinkTimeline { steps.snapshot }

    var stats: VideoStats { measured.snapshot }
    var linkStats: LinkStatistics { offerer.stats }
    /// The ICE candidate pair the link's media uses (nil until one is selected).
    var selectedCandidatePair: ICECandidatePair? { offerer.selectedCandidatePair }

    /// The call was answered at `date`: answer -> first frame counts from it (a link prepared while
    /// the call rang learns it when it is put to use).
    func callAnswered(at date: Date?) {
        measured.setAnsweredAt(date)
        if let date { steps.set(\.callAnswered, to: date) }
    }

    /// The offer went to the device now.
    func offerSent() { steps.record(\.offerSent) }

    // MARK: Starting

    /// Whether a start on a background thread is running, and whether `close()` came meanwhile.
    private let background = Mutex(BackgroundStart.none)

    private enum BackgroundStart {
        case none
        case running(closeRequested: Bool)
        case finished
    }

    /// Starts the pipeline on a background thread (in a fresh process the first one takes hundreds
    /// of ms: a link prepared while the call rings must not hold the app's actor that long), then
    /// calls `done` with the error, if any. A `close()` that comes meanwhile waits for the start to
    /// end, then stops everything: no pipeline is left running.
    func startInBackground(_ done: @escaping @Sendable (WebRTCLinkError?) -> Void) {
        background.withLock { $0 = .running(closeRequested: false) }
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            var failure: WebRTCLinkError?
            do throws(WebRTCLinkError) {
                try offerer.start()
            } catch {
                failure = error
            }
            let closeNow = background.withLock { state -> Bool in
                defer { state = .finished }
                if case .running(closeRequested: true) = state { return true }
                return false
            }
            if closeNow { offerer.close() }
            done(failure)
        }
    }

    /// The pipeline's start ran and ended (at once for a link started in the caller's thread).
    var startFinished: Bool {
        background.withLock { state in
            switch state {
            case .none, .finished: true
            case .running: false
            }
        }
    }

    func close() {
        pattern?.stop()
        let startRunning = background.withLock { state -> Bool in
            guard case .running = state else { return false }
            state = .running(closeRequested: true)
            return true
        }
        // A start still building the pipeline closes it when it ends (startInBackground).
        if !startRunning { offerer.close() }
        hevc?.close()
        continuation.finish()
    }
}

/// Video stats behind a lock: frames arrive on a GStreamer thread.
final class LockedStats: Sendable {
    private let state = Mutex((stats: VideoStats(), answeredAt: Date?.none))

    func setAnsweredAt(_ date: Date?) { state.withLock { $0.answeredAt = date } }

    func add(_ frame: DecodedVideoFrame) {
        state.withLock { s in
            s.stats.add(luma: frame.luma, width: frame.width, height: frame.height, stride: frame.stride,
                        arrivalUnixNanos: frame.arrivalUnixNanos, answeredAt: s.answeredAt)
        }
    }

    var snapshot: VideoStats { state.withLock { $0.stats } }
}

/// Writes decoded frames' luma planes as PGM images (`--save-frames DIR`).
final class FrameSaver: Sendable {
    private let directory: String
    private let index = Mutex(0)

    init(directory: String) {
        self.directory = directory
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func save(_ frame: DecodedVideoFrame) {
        let n = index.withLock { i in
            defer { i += 1 }
            return i
        }
        var data = Data("P5\n\(frame.width) \(frame.height)\n255\n".utf8)
        for row in 0..<frame.height {
            let start = row * frame.stride
            guard start + frame.width <= frame.luma.count else { break }
            data.append(contentsOf: frame.luma[start..<(start + frame.width)])
        }
        let path = directory + String(format: "/frame-%05d.pgm", n)
        _ = FileManager.default.createFile(atPath: path, contents: data)
    }
}
