import IPCWire

/// A doorbell call once answered (PROTOCOL.md 8.2), on either side: the device's call a household
/// user accepted, or the app's call the device said `answered` to. Its link, heartbeats and `stop`
/// are §3.3's.
struct DoorbellCall: Sendable {
    let callId: String
    /// The other side: the accepting user (device side) or the device (app side).
    let peer: String
    let startedAt: Int64
    let deadline: Int64
    let answeredAt: Int64
    var media: MediaLinkState
}
