import DeviceProfile
import IPCWire
import WebRTCLink

/// One P2P media link of a device (PROTOCOL.md 4), whatever carries it: the real webrtcbin
/// answerer (`P2PLink`) or a simulated one (`SimulatedDeviceLink`). The device reads its signals
/// in order and carries them out; `P2PLinkRules` decides who may open, steer and close it.
public protocol DeviceMediaLink: AnyObject, Sendable {
    var sessionId: String { get }
    /// The offer's header; replies swap from/to and echo the rest.
    var offerHeader: SignalHeader { get }
    /// Not the answered call's link (it holds one of the process's live-view slots).
    var liveView: Bool { get }
    /// When the link was made, on the device's clock (its send rate is frames over age).
    var openedAtMs: Int64 { get }
    /// What the link tells its device, in order (answer before candidates).
    var signals: AsyncStream<P2PLinkSignal> { get }
    /// Negotiates (the answer and candidates follow on `signals`) and starts sending.
    func start() throws
    func addRemoteCandidate(_ line: String, mLineIndex: Int)
    /// PROTOCOL.md 4 `resolution`, 8.6's 312: moves the link to the other stream. False when it
    /// already sends that stream.
    @discardableResult
    func switchStream(to target: StreamType) throws -> Bool
    /// PROTOCOL.md 8.6: the app's audio on the speaker, or muted.
    func setSpeaker(on: Bool)
    /// Media counters: frames sent, the peer's frames and packets received.
    var stats: LinkStatistics { get }
    /// The latest frame received from the app, as JPEG (two-way calls).
    func snapshotJPEG() throws -> [UInt8]
    func close()
}

/// What a device asks its link factory for: a link answering `offer`.
public struct DeviceLinkRequest: Sendable {
    public var offer: SignalOffer
    public var header: SignalHeader
    public var profile: DeviceProfile
    public var liveView: Bool
    /// The device's clock now.
    public var nowMs: Int64

    public init(offer: SignalOffer, header: SignalHeader, profile: DeviceProfile, liveView: Bool, nowMs: Int64) {
        self.offer = offer
        self.header = header
        self.profile = profile
        self.liveView = liveView
        self.nowMs = nowMs
    }
}

/// The seam that builds a device's media links (issue 23, DESIGN.md "Scale": an engine host runs
/// with an injected link factory). `GStreamerDeviceLinks` is the real one, `SimulatedDeviceLinks`
/// the one of tests and the simulator.
public protocol DeviceLinkFactory: Sendable {
    func makeLink(_ request: DeviceLinkRequest) throws -> any DeviceMediaLink
    /// A call rings: get ready for its link (the real factory starts the camera's main feed).
    func prepareWhileRinging(profile: DeviceProfile)
    /// Whether a new live-view link may take a process-wide slot (issue 11).
    var hasLiveViewRoom: Bool { get }
    /// A call rings: get ready for its link (the real factory also builds the device's pipeline
    /// for the call's offer, issue 24 item 6). Nothing may go on the wire before the offer.
    func prepareWhileRinging(profile: DeviceProfile, devId: String, sessionId: String)
    /// A call ended: whatever was prepared for its link and not used is torn down.
    func callEnded(devId: String, sessionId: String)
}

extension DeviceLinkFactory {
    public func prepareWhileRinging(profile: DeviceProfile, devId: String, sessionId: String) {
        prepareWhileRinging(profile: profile)
    }

    public func callEnded(devId: String, sessionId: String) {}
}

/// The real links: webrtcbin answerers fed by `feeds` (one capture and encoder per camera and
/// stream size, shared), within the process's live-view slots.
public struct GStreamerDeviceLinks: DeviceLinkFactory {
    public let feeds: VideoFeeds
    let slots: LiveViewSlots

    public init(feeds: VideoFeeds = .shared) {
        self.init(feeds: feeds, slots: .shared)
    }

    init(feeds: VideoFeeds, slots: LiveViewSlots) {
        self.feeds = feeds
        self.slots = slots
    }

    public func makeLink(_ request: DeviceLinkRequest) throws -> any DeviceMediaLink {
        // The pipeline built while this call rang, if any (a live view's offer finds none).
        let prepared = feeds.preparedAnswers.take(devId: request.header.to, sessionId: request.header.sessionId)
        do {
            return try P2PLink(offer: request.offer, header: request.header, profile: request.profile, liveView: request.liveView,
                               feeds: feeds, slots: slots, openedAtMs: request.nowMs, prepared: prepared)
        } catch {
            prepared?.close()
            throw error
        }
    }

    public func prepareWhileRinging(profile: DeviceProfile) {
        P2PLink.prepare(profile: profile, for: .seconds(30), feeds: feeds)
    }

    public func prepareWhileRinging(profile: DeviceProfile, devId: String, sessionId: String) {
        prepareWhileRinging(profile: profile)
        guard feeds.preparesWhileRinging else { return }
        feeds.preparedAnswers.prepare(profile: profile, devId: devId, sessionId: sessionId)
    }

    public func callEnded(devId: String, sessionId: String) {
        feeds.preparedAnswers.discard(devId: devId, sessionId: sessionId)
    }

    public var hasLiveViewRoom: Bool { slots.hasRoom }
}
