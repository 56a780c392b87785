import Camera
import Foundation
import IPCWire
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

    enum Signal: Sendable {
        case offer(sdp: String)
        case candidate(line: String, mLineIndex: Int)
        case state(LinkState)
    }

    private let steps: LockedTimeline

    /// PROTOCOL.md 7: the video comes as HEVC over the `fmp4Stream` data channel (nil: RTP).
    let hevc: AppHEVCReceiver?

    /// The servers the offer's `token` names and this link's own ICE uses (PROTOCOL.md 4, 9.4).
    let ice: AppICEConfiguration

    init(sessionId: String, devId: String, sendsVideo: VideoFormat?, answeredAt: Date?, saveFramesTo: String?,
         decodes: Bool = true, hevc wantsHEVC: Bool = false, ice: AppICEConfiguration = AppICEConfiguration()) {
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
        let onFrame: @Sendable (DecodedVideoFrame) -> Void = { frame in
            measured.add(frame, answeredAt: answeredAt)
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
            dataChannel: dataChannel)
        // A 20 ms jitter buffer: like a browser's adaptive one on a clean network (loopback, LAN),
        // it does not hold the first frame back. HEVC: audio and the fmp4Stream channel, no RTP video.
        let configuration = wantsHEVC
            ? OfferConfiguration(receivesRTPVideo: false, dataChannels: [FMP4ControlMessage.channelLabel])
            : OfferConfiguration(sendsVideo: sendsVideo, decodesVideo: decodes, sendsPushedFrames: sendsVideo != nil,
                                 sendsAudio: sendsVideo != nil)
        let options = LinkOptions(iceServers: ice.linkServers, jitterBufferMs: 20, relayOnly: ice.relayOnly)
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
    var answerArrivedAt: Date? { steps.snapshot.answerReceived }
    /// When each step of this link happened so far.
    var timeline: LinkTimeline { steps.snapshot }

    var stats: VideoStats { measured.snapshot }
    var linkStats: LinkStatistics { offerer.stats }
    /// The ICE candidate pair the link's media uses (nil until one is selected).
    var selectedCandidatePair: ICECandidatePair? { offerer.selectedCandidatePair }

    func close() {
        pattern?.stop()
        offerer.close()
        hevc?.close()
        continuation.finish()
    }
}

/// Video stats behind a lock: frames arrive on a GStreamer thread.
final class LockedStats: @unchecked Sendable {
    private let lock = NSLock()
    private var stats = VideoStats()

    func add(_ frame: DecodedVideoFrame, answeredAt: Date?) {
        lock.lock()
        defer { lock.unlock() }
        stats.add(luma: frame.luma, width: frame.width, height: frame.height, stride: frame.stride,
                  arrivalUnixNanos: frame.arrivalUnixNanos, answeredAt: answeredAt)
    }

    var snapshot: VideoStats {
        lock.lock()
        defer { lock.unlock() }
        return stats
    }
}

/// Writes decoded frames' luma planes as PGM images (`--save-frames DIR`).
final class FrameSaver: @unchecked Sendable {
    private let directory: String
    private let lock = NSLock()
    private var index = 0

    init(directory: String) {
        self.directory = directory
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func save(_ frame: DecodedVideoFrame) {
        lock.lock()
        let n = index
        index += 1
        lock.unlock()
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
