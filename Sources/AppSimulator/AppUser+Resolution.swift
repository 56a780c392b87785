import CallRuntime
import IPCWire

extension AppUser {
    /// PROTOCOL.md 4 `resolution`: asks the device to switch the session's link to another stream
    /// (0 main, 1 sub). No reply comes; the decoded size changes (`VideoStats.sizeChanges`).
    public func switchStream(sessionId: String, devId: String, to stream: StreamType) throws(AppError) {
        let header = SignalHeader(from: userId, to: devId, sessionId: sessionId)
        let message = SignalMessage(header: header, body: .resolution(SignalResolution(streamType: stream)))
        try send(message.envelope(t: clock.nowSeconds()), to: devId)
    }
}
