import IPCWire

/// The device's link lifecycle of PROTOCOL.md 4, sans-IO (issue 23: these rules lived inside the
/// `Device` actor): who may open a link and at what limits (`admitOffer`), who may steer one
/// (`control`: a `resolution` or a 312 only from the link's owner), and the reaper of a link that
/// never comes up (`connectTimeoutFired`). The device carries out what they decide.
extension P2PLinkRules {
    /// What to do with an offer (device role).
    public enum OfferVerdict: Sendable, Equatable {
        /// Open a link for the session; `replacing`: close the one it has first (without touching
        /// these rules: the new link is already recorded). `liveView`: it is not the answered
        /// call's link. Arm the reaper for `reapAtMs` with `generation`.
        case open(replacing: Bool, liveView: Bool, generation: UInt64, reapAtMs: Int64)
        /// Refuse: `disconnect` with `closeReason` to the sender (1 unauthorised, 2 unavailable:
        /// a live-view limit); nothing else changes.
        case refuse(why: String, closeReason: Int64)
    }

    /// A link the reaper closed.
    public struct ReapedLink: Sendable, Equatable {
        /// It was live view (the call's link going down is news for the engine; this is not).
        public var liveView: Bool

        public init(liveView: Bool) { self.liveView = liveView }
    }

    /// Whether the sender of a `resolution` or a 312 may steer the session's link.
    public enum ControlAccess: Sendable, Equatable {
        case owner
        case noLink
        case notOwner(owner: String)
    }

    /// Device role, PROTOCOL.md 4 "Who may open a link", then the live-view limits of issue 11:
    /// a live-view link (any link but the answered call's, from the user who answered) is refused
    /// with `unavailable` when the device has `liveViewLimit` others open, or when it would take a
    /// new process-wide slot and `processHasLiveViewRoom` is false. The call's link is never
    /// refused for live view's sake. An accepted offer records the link (not yet up) at `nowMs`.
    public mutating func admitOffer(sessionId: String, from: String, auth: String,
                                    answeredCall: (sessionId: String, peer: String)?, nowMs: Int64,
                                    processHasLiveViewRoom: Bool = true) -> OfferVerdict {
        let unauthorised = SignalDisconnect.unauthorised
        guard let secrets else { return .refuse(why: "an app does not accept offers", closeReason: unauthorised) }
        guard P2PAuth.verify(auth, p2pPassword: secrets.p2pPassword, localKey: secrets.localKey, devId: secrets.devId) else {
            return .refuse(why: "wrong auth", closeReason: unauthorised)
        }
        // A second offer replaces a link only from the user whose offer made it (the app
        // reconnecting); nobody takes over another user's link (issue 10, hostile peers).
        if let owner = links[sessionId], owner != from {
            return .refuse(why: "session '\(sessionId)' has a link of another user", closeReason: unauthorised)
        }
        if links[sessionId] == nil, links.count >= maxLinks {
            return .refuse(why: "already \(links.count) P2P links (the most a device keeps)", closeReason: unauthorised)
        }
        let answered = answeredCall.map { $0.sessionId == sessionId && $0.peer == from } ?? false
        guard answered || secrets.liveView else {
            return .refuse(why: "session '\(sessionId)' is not a call answered by '\(from)' and live view is off",
                           closeReason: unauthorised)
        }
        let liveView = !answered
        if liveView {
            let open = details.filter { $0.key != sessionId && $0.value.liveView }.count
            if open >= liveViewLimit {
                return .refuse(why: "\(open) live-view links open, the profile allows \(liveViewLimit)",
                               closeReason: SignalDisconnect.unavailable)
            }
            if details[sessionId]?.liveView != true, !processHasLiveViewRoom {
                return .refuse(why: "the process's live-view links are at its limit", closeReason: SignalDisconnect.unavailable)
            }
        }
        let replacing = links[sessionId] != nil
        let generation = takeGeneration()
        links[sessionId] = from
        details[sessionId] = LinkDetail(liveView: liveView, generation: generation, up: false)
        let (reapAt, overflow) = nowMs.addingReportingOverflow(connectTimeoutMs)
        return .open(replacing: replacing, liveView: liveView, generation: generation, reapAtMs: overflow ? .max : reapAt)
    }

    /// The link `generation` of the session came up (the reaper leaves it alone).
    public mutating func linkUp(sessionId: String, generation: UInt64) {
        guard details[sessionId]?.generation == generation else { return }
        details[sessionId]?.up = true
    }

    /// The connect timeout of link `generation` passed. If that link is still the session's and
    /// never came up, it is forgotten and the answer says what it was: close it, tell the app
    /// (`disconnect`, close_reason 0), and, unless it was live view, the call's link is down
    /// (PROTOCOL.md 3.3 decides the call). Nil: nothing to do (replaced, closed, or up).
    public mutating func connectTimeoutFired(sessionId: String, generation: UInt64) -> ReapedLink? {
        guard let detail = details[sessionId], detail.generation == generation, !detail.up else { return nil }
        closed(sessionId: sessionId)
        return ReapedLink(liveView: detail.liveView)
    }

    /// PROTOCOL.md 4 `resolution` (and 8.6's 312): only the user whose offer made the link.
    public func control(sessionId: String, from: String) -> ControlAccess {
        guard let owner = links[sessionId] else { return .noLink }
        return owner == from ? .owner : .notOwner(owner: owner)
    }

    /// Live-view links open now.
    public var liveViewCount: Int { details.values.filter(\.liveView).count }
}
