import Foundation
import IPCWire

extension AppUser {
    /// Closes the session's link and tells the device (PROTOCOL.md 4: 302 `disconnect` with
    /// `closeReason`, as this user); the app engine hears the link went down. Nothing open is not
    /// an error: the device is told all the same (the web console's video close).
    public func closeVideo(sessionId: String, devId: String, closeReason: Int64) {
        closeVideo(sessionId: sessionId)
        let message = SignalMessage(header: SignalHeader(from: userId, to: devId, sessionId: sessionId),
                                    body: .disconnect(SignalDisconnect(closeReason: closeReason)))
        try? publish(message.envelope(t: clock.nowSeconds()), to: devId)
        mediaLink(up: false, sessionId: sessionId)
    }
}
