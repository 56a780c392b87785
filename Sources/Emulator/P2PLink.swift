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

        let camera = CameraConfig(profile: profile, stream: offer.streamType)
        let input: VideoInput = switch profile.camera {
        case .clip: .h264AccessUnits
        case .v4l2(let cam) where cam.format == .h264: .h264AccessUnits
        default: .rawFrames
        }
        let media = SendMedia(video: VideoFormat(width: camera.width, height: camera.height, fps: Int(camera.fps.rounded())),
                              videoInput: input)
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
            default:
                break  // MJPEG/YUYV cameras: frames are not converted for streaming yet.
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
