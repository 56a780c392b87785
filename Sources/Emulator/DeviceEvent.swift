import CallEngine
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
