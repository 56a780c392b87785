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
    /// PROTOCOL.md 8.2: a `video_doorbell` message arrived and was handed to the doorbell machine.
    case receivedDoorbell(VideoDoorbellMessage)
    /// PROTOCOL.md 8.2: a `video_doorbell` message was published.
    case sentDoorbell(VideoDoorbellMessage)
    /// PROTOCOL.md 8.1: a press announced doorbell call `callId` (the 43 was published).
    case pressed(callId: String)
    /// PROTOCOL.md 8.3: a protocol 4 report was published with these DPs.
    case dataPointsReported([DPEntry])
    /// PROTOCOL.md 8.4: the device fell asleep.
    case fellAsleep
    /// PROTOCOL.md 8.4: the device is awake again, `latencyMs` after the wake request.
    case wokeUp(latencyMs: Int64)
    /// PROTOCOL.md 8.5: a snapshot or message was stored (its API path).
    case mediaStored(name: String, path: String)
}

/// What the doorbell parts of PROTOCOL.md 8 counted on one device (the metrics read them).
public struct DoorbellCounters: Sendable, Equatable {
    /// Presses that announced a call (8.1) or left a message (8.5).
    public var presses = 0
    /// Presses while a doorbell call was ringing or connected: counted and ignored (8.1).
    public var pressesIgnored = 0
    /// Wakes that completed (8.4).
    public var wakes = 0
    /// Payloads on the wake topic that were not the CRC32 of the localKey (8.4).
    public var badWakes = 0
    /// Messages dropped while asleep (8.4).
    public var droppedWhileAsleep = 0
    /// DPs of protocol 5 commands not applied (8.3): read-only, wrong type, out of range, unknown.
    public var dpRefusals = 0
    /// Protocol 4 reports published.
    public var dpReports = 0
    /// Left messages recorded (8.5).
    public var messages = 0
    /// Pushes that failed or were lost (8.8).
    public var pushFailures = 0
    /// 312 commands refused (8.6).
    public var streamControlRefusals = 0

    public init() {}
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
