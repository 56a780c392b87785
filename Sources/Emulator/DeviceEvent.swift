import CallEngine
import Camera
import IPCWire

/// What a device did, for observers (tests, the control API, the CLI's log).
public enum DeviceEvent: Sendable, Equatable {
    /// The MQTT connection changed: connected, or down with a reason (it keeps retrying).
    case connection(connected: Bool, detail: String)
    /// A call event arrived and was handed to the engine.
    case received(CallMessage)
    /// A call event was published.
    case sent(CallMessage)
    /// The device started or stopped ringing for an incoming call.
    case ringing(sessionId: String)
    case ringingStopped(sessionId: String)
    /// A call ended, with its record (outcome, reason, peers, times).
    case callEnded(CallRecord)
    /// A message was dropped or refused; `why` names what was wrong.
    case refused(why: String)
    /// A P2P offer was refused with `disconnect` (PROTOCOL.md 4).
    case offerRefused(sessionId: String, from: String, why: String)
}

/// A point-in-time view of one device.
public struct DeviceStatus: Sendable, Equatable {
    public var devId: String
    public var connected: Bool
    public var phase: CallPhase
    public var session: CallSessionSnapshot?
    public var answerPolicy: AnswerPolicy
    public var actingBusy: Bool
    public var callsEnded: Int
    public var lastCall: CallRecord?
    /// Media over every P2P link so far (closed links included).
    public var media: MediaTotals
    /// What the camera of the links last reported (nil until a link streamed it), and how often it
    /// was lost (issue 10: a camera unplugged mid-call).
    public var camera: CameraHealth = CameraHealth()
}

/// The camera as the device's P2P links saw it: its last report, and how many times it stopped
/// delivering video (a report of no video after live, or at the first open).
public struct CameraHealth: Sendable, Equatable {
    /// The capture's last report (live, or no video and why); nil before any link streamed it.
    public var status: FrameSourceStatus?
    /// Times the camera was lost: each change into "no video".
    public var losses: Int = 0

    public init(status: FrameSourceStatus? = nil, losses: Int = 0) {
        self.status = status
        self.losses = losses
    }

    /// False only while the last report was "no video".
    public var isLost: Bool {
        if case .noVideo = status { return true }
        return false
    }

    /// Takes a report from a link's capture; reports of the same state (one per link on a shared
    /// capture, or another reason while it retries) count once.
    public mutating func take(_ report: FrameSourceStatus) {
        if case .stopped = report { return }
        if case .noVideo = report, !isLost { losses += 1 }
        status = report
    }
}

/// Video frames sent and received over the device's P2P links, and the send rate now.
public struct MediaTotals: Sendable, Equatable {
    public var framesSent: Int
    public var framesReceived: Int
    /// Frames per second sent over the open links (each link's frames over its age, summed).
    public var fps: Double
    public var openLinks: Int

    public init(framesSent: Int = 0, framesReceived: Int = 0, fps: Double = 0, openLinks: Int = 0) {
        self.framesSent = framesSent
        self.framesReceived = framesReceived
        self.fps = fps
        self.openLinks = openLinks
    }
}
