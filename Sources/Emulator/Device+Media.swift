import CallRuntime
import IPCWire

extension Device {
    /// PROTOCOL.md 4 `resolution`: from the user whose offer made the link, a switch of that link
    /// between main (0) and sub (1). A value the profile has no stream for, a session without a
    /// link, or another sender: logged and dropped (no reply either way).
    func switchStream(_ resolution: SignalResolution, header h: SignalHeader) {
        let access = linkRules.control(sessionId: h.sessionId, from: h.from)
        if case .notOwner(let owner) = access {
            refuse("dropped a 302 resolution for session '\(h.sessionId)' from '\(h.from)': the link is '\(owner)''s", kind: .signal)
            return
        }
        guard access == .owner, let link = links[h.sessionId] else {
            refuse("dropped a 302 resolution for session '\(h.sessionId)': it has no P2P link", kind: .signal)
            return
        }
        guard let stream = resolution.streamType, template.profile.capabilities.video != nil else {
            refuse("dropped a 302 resolution with value \(resolution.value): the profile has no such stream (0 main, 1 sub)", kind: .signal)
            return
        }
        do {
            let changed = try link.switchStream(to: stream)
            log.log(.info, changed ? "switching the link's stream" : "the link already sends that stream", device: devId,
                    fields: [("session", h.sessionId), ("stream", stream == .main ? "main" : "sub")])
        } catch {
            log.log(.error, "cannot switch the link's stream", device: devId,
                    fields: [("session", h.sessionId), ("why", "\(error)")])
        }
    }
}
