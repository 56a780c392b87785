import CallEngine
import IPCWire

/// What the simulated app saw or did, as the SDK's delegate would report it.
public enum AppEvent: Sendable, Equatable {
    case connection(connected: Bool, detail: String)
    case sent(CallMessage, devId: String)
    case received(CallMessage, devId: String)
    /// A device is calling this user (listen mode): the phone rings.
    case incomingCall(sessionId: String, devId: String)
    /// The device acknowledged our call with `ring`.
    case deviceRinging(sessionId: String, devId: String)
    /// A call ended; `record.sdkError` is the SDK error code (PROTOCOL.md 3.5), nil for our own hang-up.
    case callEnded(CallRecord)
    case refused(why: String)
    case signal(SignalMessage, devId: String)
}
