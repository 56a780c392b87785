import IPCWire

extension DeviceCallEngine {
    /// PROTOCOL.md 8.2: "A `video_doorbell` for a `screen_ipc` device gets a `video_doorbell`
    /// `stop` with `reason` `invalid_params`." Nothing else changes. Without a `uid` (or after the
    /// shutdown) there is no one to answer: refused, no reply (as 3.4's anonymous messages).
    mutating func receive(_ message: VideoDoorbellMessage, now: Int64) -> [CallEffect] {
        if isShutDown { return [.refusedDoorbell(message, .shutDown)] }
        guard let uid = message.uid, !uid.isEmpty, !message.eData.isEmpty else {
            return [.refusedDoorbell(message, .anonymous)]
        }
        let why = Refusal.wrongCallKind("a video_doorbell message for a screen_ipc device")
        // Never a stop for a stop (two sides that both did would ping-pong forever, 3.4).
        guard message.event != .stop else { return [.refusedDoorbell(message, why)] }
        return [.refusedDoorbell(message, why),
                .sendDoorbell(VideoDoorbellMessage(devId: devId, uid: uid, event: .stop, eData: message.eData,
                                                   reason: StopReason.invalidParams.rawValue))]
    }
}
