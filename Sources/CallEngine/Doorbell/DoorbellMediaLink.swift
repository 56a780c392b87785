import IPCWire

extension DoorbellCallEngine {
    /// The connected call's P2P link (PROTOCOL.md 8.2, as §3.3; the rules are `mediaLinkUp` and
    /// `mediaLinkDown` in Shared/CallMediaLink.swift).
    var linkedMedia: (sessionId: String, media: MediaLinkState)? {
        guard case .connected(let call) = state else { return nil }
        return (call.callId, call.media)
    }

    mutating func setLinkedMedia(_ media: MediaLinkState) {
        guard case .connected(var call) = state else { return }
        call.media = media
        state = .connected(call)
    }

    /// 8.2: "link lost for 5 s: stop disconnected".
    var mediaLostGraceMs: Int64? { config.mediaLostGraceMs }
}
