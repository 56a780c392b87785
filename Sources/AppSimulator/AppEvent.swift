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
    /// PROTOCOL.md 8.1: a protocol 43 press from a device this app reads (whether it rings this
    /// phone or not: a press during another doorbell call does not).
    case doorbellPressed(DoorbellPressMessage)
    /// PROTOCOL.md 8.1: a doorbell press rings this phone: call `callId` (the 43's `edata`) of
    /// `devId`, seen at `atMs` (unix ms, the app's clock). Its end is a `callEnded`.
    case doorbellRinging(devId: String, callId: String, atMs: Int64)
    /// PROTOCOL.md 8.2: a `video_doorbell` message this app sent (`accept`, `stop`, `heartbeat`).
    case doorbellSent(VideoDoorbellMessage)
    /// PROTOCOL.md 8.2: a `video_doorbell` message from a device (`answered`, `heartbeat`, `stop`,
    /// `timeout`, `cancel`); `uid` names the user it concerns (absent: everyone), which may be
    /// another user of the household.
    case doorbellReceived(VideoDoorbellMessage)
    /// PROTOCOL.md 8.3: a protocol 4 report: the DPs it carried (the app's cache has them too).
    case dpReport(devId: String, dps: [DPId: DPValue])
}
