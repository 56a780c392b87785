import CallRuntime
import IPCWire

extension Device {
    /// PROTOCOL.md 4 `resolution`: from the user whose offer made the link, a switch of that link
    /// between main (0) and sub (1). A value the profile has no stream for, a session without a
    /// link, or another sender: logged and dropped (no reply either way).
    func switchStream(_ resolution: SignalResolution, header h: SignalHeader) {
        guard let link = links[h.sessionId] else {
            refuse("dropped a 302 resolution for session '\(h.sessionId)': it has no P2P link", kind: .signal)
            return
        }
        guard link.offerHeader.from == h.from else {
            refuse("dropped a 302 resolution for session '\(h.sessionId)' from '\(h.from)': the link is '\(link.offerHeader.from)''s", kind: .signal)
            return
        }
        guard let stream = resolution.streamType, profile.capabilities.video != nil else {
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

    // MARK: Live view (issue 11: limits that protect the calls that matter)

    /// A live-view offer beyond the profile's `liveViewLimit` on this device, or the process's
    /// limit (`MediaPreparation.setProcessLiveViewLimit`), is refused; the call's link never
    /// counts, and is never refused for live view's sake.
    func liveViewRefusal(_ h: SignalHeader) -> String? {
        guard isLiveView(h) else { return nil }
        let open = links.values.filter { $0.liveView && $0.sessionId != h.sessionId }.count
        let limit = profile.capabilities.liveViewLimit
        if open >= limit { return "\(open) live-view links open, the profile allows \(limit)" }
        if links[h.sessionId]?.liveView != true, !LiveViewSlots.shared.hasRoom {
            return "the process has \(LiveViewSlots.shared.limit) live-view links open, its limit"
        }
        return nil
    }

    func refuseLiveView(_ h: SignalHeader, why: String) {
        refuseOffer(h, why: why, what: "live view refused", closeReason: SignalDisconnect.unavailable)
    }

    /// A link still not up `connectTimeout` after its offer is closed (the app gets
    /// `disconnect`); for the answered call the engine then ends the call as PROTOCOL.md 3.3 says.
    func reapIfNeverConnected(_ link: P2PLink) {
        let timeout = Self.reapDelay(seconds: profile.timers.connectTimeout)
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.reap(link)
        }
    }

    private func reap(_ link: P2PLink) {
        guard links[link.sessionId] === link, !link.hasConnected else { return }
        log.log(.warning, "P2P link never connected: closed", device: devId, fields: [("session", link.sessionId)])
        closeLink(link.sessionId, notifyPeer: true)
        if !link.liveView { mediaLink(up: false, sessionId: link.sessionId) }
    }
}
