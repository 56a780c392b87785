import Camera
import DeviceProfile
import Foundation
import IPCWire
import WebRTCLink

/// What a P2P link tells its device, in order (answer before candidates; PROTOCOL.md 4).
enum P2PLinkSignal: Sendable {
    case answer(sdp: String)
    case candidate(line: String, mLineIndex: Int)
    case up
    case lost(String)
}

/// One P2P media link of a device (PROTOCOL.md 4): a webrtcbin answerer fed by the profile's
/// camera at the offered stream's size. Its signals come out as one ordered stream.
final class P2PLink: Sendable {
    let sessionId: String
    /// The offer's header; replies swap from/to and echo the rest.
    let offerHeader: SignalHeader
    let signals: AsyncStream<P2PLinkSignal>
    let streamType: StreamType
    /// When the link was made (its send rate is frames over age).
    let openedAt = ContinuousClock.now
    private let answerer: WebRTCAnswerer
    private let source: any FrameSource
    private let continuation: AsyncStream<P2PLinkSignal>.Continuation

    /// Builds the link; `start()` negotiates and starts the camera.
    init(offer: SignalOffer, header: SignalHeader, profile: DeviceProfile) throws {
        sessionId = header.sessionId
        offerHeader = header
        streamType = offer.streamType
        let (stream, continuation) = AsyncStream<P2PLinkSignal>.makeStream(bufferingPolicy: .unbounded)
        signals = stream
        self.continuation = continuation

        var camera = CameraConfig(profile: profile, stream: offer.streamType)
        let offered = (offer.streamType == .sub ? profile.capabilities.video?.sub : profile.capabilities.video?.main)
            ?? DeviceProfile.StreamFormat.defaultMain
        let input: VideoInput
        var sendFormat = VideoFormat(width: camera.width, height: camera.height, fps: Int(camera.fps.rounded()))
        switch profile.camera {
        case .testPattern:
            input = .rawFrames
        case .clip:
            input = .h264AccessUnits
        case .v4l2(let cam):
            switch cam.format {
            case .h264:
                input = .h264AccessUnits
            case .yuyv:
                input = .capturedFrames(.yuyv, width: cam.width, height: cam.height)
            case .mjpeg, .auto:
                // `auto` asks the camera for MJPEG, what USB webcams deliver at full rate; a camera
                // without it falls back to another format, whose frames are dropped (set `format`).
                camera.preferredFormat = .mjpeg
                input = .capturedFrames(.mjpeg, width: cam.width, height: cam.height)
            }
            if cam.format != .h264 {
                // Decoded camera frames are scaled to the offered stream's size.
                sendFormat = VideoFormat(width: offered.width, height: offered.height, fps: cam.fps)
            }
        }
        let media = SendMedia(video: sendFormat, videoInput: input)
        let options = LinkOptions(iceServers: offer.iceServers.map {
            WebRTCLink.ICEServer(urls: $0.urls, username: $0.username ?? "", credential: $0.credential ?? "")
        })
        let events = LinkEvents(
            localDescription: { sdp in continuation.yield(.answer(sdp: sdp)) },
            localCandidate: { c in continuation.yield(.candidate(line: c.candidate, mLineIndex: c.sdpMLineIndex)) },
            stateChanged: { state in
                switch state {
                case .connected: continuation.yield(.up)
                case .lost(let why): continuation.yield(.lost("\(why)"))
                default: break
                }
            })
        answerer = try WebRTCAnswerer(offer: offer.sdp, media: media, options: options, events: events)
        source = try camera.makeSource()
    }

    /// Negotiates (the answer and candidates follow on `signals`) and starts feeding frames.
    func start() throws {
        try answerer.start()
        let answerer = self.answerer
        try source.start { event in
            guard case .frame(let frame) = event else { return }
            switch frame.format {
            case .i420:
                _ = answerer.pushVideoFrame(frame.bytes, width: frame.width, height: frame.height,
                                            ptsNanos: Int64(frame.timestampNs))
            case .h264:
                _ = answerer.pushH264AccessUnit(frame.bytes, ptsNanos: Int64(frame.timestampNs), isKeyFrame: frame.isKeyFrame)
            case .mjpeg, .yuyv, .nv12:
                _ = answerer.pushCapturedFrame(frame.bytes, ptsNanos: Int64(frame.timestampNs))
            }
        }
    }

    func addRemoteCandidate(_ line: String, mLineIndex: Int) {
        answerer.addRemoteCandidate(line, sdpMLineIndex: mLineIndex)
    }

    /// Media counters: frames sent, the peer's frames and packets received.
    var stats: LinkStatistics { answerer.stats }

    /// The latest frame received from the app, as JPEG (two-way calls).
    func snapshotJPEG() throws -> [UInt8] { try answerer.snapshotJPEG() }

    func close() {
        source.stop()
        answerer.close()
        continuation.finish()
    }
}
