// An answerer's pipeline built before its offer (issue 24 item 6: the first frame in under 50 ms).
// While a call rings, the device builds and plays what the answer to a typical offer needs
// (webrtcbin, the video send branch, the audio tone), so the offer only sets directions, the ICE
// servers and the remote description. Nothing goes on the wire before the offer: webrtcbin makes
// no answer and gathers no candidate until then (PROTOCOL.md 4 is unchanged).
import Synchronization

/// A device-side pipeline waiting for its offer. `WebRTCAnswerer(..., prepared:)` takes it when
/// the offer needs exactly this pipeline; otherwise, and when the call ends unanswered, `close()`
/// stops it.
public final class PreparedAnswerer: Sendable {
    /// What the answer to a typical offer sends: H.264 with payload type 96 and PCMA (8), the
    /// app simulator's offer and the common one.
    static let typicalPlan = AnswerPlan(videoPayloadType: 96, audio: .pcma, audioPayloadType: 8)

    private let core: PeerCore
    private let layout: WebRTCAnswerer.PipelineLayout
    private let media: SendMedia
    private let devices: LocalMediaDevices
    /// The options but ICE servers and relay-only, which come with the offer.
    private let baseOptions: LinkOptions
    private let relay: EventRelay
    private let taken = Mutex(false)

    /// Builds and plays the pipeline (on the caller's thread: a few ms). `media.videoInput` is
    /// normally `.h264AccessUnits` (a shared feed).
    public init(media: SendMedia, options: LinkOptions = LinkOptions(), devices: LocalMediaDevices = LocalMediaDevices())
        throws(WebRTCLinkError)
    {
        var base = options
        base.iceServers = []
        base.relayOnly = false
        baseOptions = base
        self.media = media
        self.devices = devices
        let encoderFactory = try WebRTCAnswerer.encoderFactory(for: media)
        let layout = WebRTCAnswerer.PipelineLayout(
            plan: Self.typicalPlan, media: media, devices: devices, options: base, encoderFactory: encoderFactory)
        self.layout = layout
        let relay = EventRelay()
        self.relay = relay
        core = PeerCore(options: base, events: relay.events, negotiation: .answerLater, devices: devices,
                        editLocalDescription: { relay.edit($0) })
        do {
            // Directions are the offer's; until then every transceiver only sends (nothing is
            // negotiated, so nothing is sent either).
            let placeholders = layout.transceivers.map { TransceiverSetup(target: $0.target, direction: .sendonly, caps: $0.caps) }
            try core.start(
                description: layout.description, transceivers: placeholders, frameRate: media.video.fps,
                pushedVideoCaps: layout.pushedVideoCaps, sendsSharedTone: layout.sendsSharedTone)
        } catch {
            core.close()
            throw error
        }
    }

    /// Not taken: the pipeline stops with its last reference (taken: the answerer owns it).
    deinit { close() }

    /// The core, once, for an answerer whose offer needs exactly this pipeline; from then on its
    /// events and answer edit are the answerer's. nil when it does not fit, was taken or closed,
    /// or failed while it waited.
    func take(for wanted: WebRTCAnswerer.PipelineLayout, media: SendMedia, devices: LocalMediaDevices, options: LinkOptions,
              events: LinkEvents, edit: @escaping @Sendable (String) -> String) -> PeerCore? {
        var compared = options
        compared.iceServers = []
        compared.relayOnly = false
        guard wanted.builds(like: layout), media == self.media, devices == self.devices, compared == baseOptions,
              core.isPlayingUnnegotiated
        else { return nil }
        let first = taken.withLock { t -> Bool in
            defer { t = true }
            return !t
        }
        guard first else { return nil }
        relay.attach(events: events, edit: edit)
        return core
    }

    /// Whether it still waits for an offer (not taken, not closed, nothing failed).
    public var isWaiting: Bool { !taken.withLock { $0 } && core.isPlayingUnnegotiated }

    /// Stops the pipeline, unless an answerer took it (then the answerer owns it). Idempotent.
    public func close() {
        let first = taken.withLock { t -> Bool in
            defer { t = true }
            return !t
        }
        if first { core.close() }
    }
}

/// Forwards a prepared core's events to the answerer that takes it (before: dropped; nothing
/// but `.connecting` happens then).
private final class EventRelay: Sendable {
    private let target = Mutex<(events: LinkEvents, edit: @Sendable (String) -> String)?>(nil)

    func attach(events: LinkEvents, edit: @escaping @Sendable (String) -> String) {
        target.withLock { $0 = (events, edit) }
    }

    func edit(_ sdp: String) -> String { target.withLock { $0 }?.edit(sdp) ?? sdp }

    private var current: LinkEvents? { target.withLock { $0 }?.events }

    /// Events for the core: every callback the device's links use, forwarded.
    var events: LinkEvents {
        LinkEvents(
            localDescription: { [self] in current?.localDescription($0) },
            localCandidate: { [self] in current?.localCandidate($0) },
            stateChanged: { [self] in current?.stateChanged($0) },
            videoFrame: nil,
            keyFrameRequested: { [self] in current?.keyFrameRequested?() },
            outputProblem: { [self] in current?.outputProblem?($0) },
            dataChannel: { [self] in current?.dataChannel?($0) })
    }
}
