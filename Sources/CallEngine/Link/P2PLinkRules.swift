import IPCWire

/// The rules of PROTOCOL.md 4 about who may open, replace and close a P2P link, as a sans-IO state
/// machine beside the call engine (DESIGN.md "Scale": not code inside an actor). It knows which
/// session has a link and whose it is; it decides, the caller carries out (starts webrtcbin,
/// publishes `disconnect`...). The device, the app simulator and the console phone all use it.
///
/// - Device role: an offer is accepted only if its `auth` is right AND either its session is the
///   call that was answered and it comes from the user who answered, or the profile allows live
///   view. A second accepted offer for a session that has a link replaces it (the app
///   reconnecting). Candidates, `disconnect` and `resolution` count only from the link's owner.
/// - App role: the app opens the link of its answered call to one device; the device's `answer`,
///   candidates and `disconnect` count only from that device, for that session.
public struct P2PLinkRules: Sendable, Equatable {
    /// What the device checks an offer against (from its profile).
    public struct DeviceSecrets: Sendable, Equatable {
        public var devId: String
        public var p2pPassword: String
        public var localKey: String
        public var liveView: Bool

        public init(devId: String, p2pPassword: String, localKey: String, liveView: Bool) {
            self.devId = devId
            self.p2pPassword = p2pPassword
            self.localKey = localKey
            self.liveView = liveView
        }
    }

    /// What to do with an offer.
    public enum OfferDecision: Sendable, Equatable {
        /// Open a link for the session; `replacing`: close the one it has first.
        case open(replacing: Bool)
        /// Refuse: `disconnect` with close_reason 1 (unauthorised) to the sender; nothing else changes.
        case refuse(why: String)
    }

    /// Session id -> the peer the link is with (device role: the offerer; app role: the device).
    public private(set) var links: [String: String] = [:]
    private let secrets: DeviceSecrets?
    /// At most this many links at once (live view may have several watchers) **[ours]**.
    public let maxLinks: Int

    /// The device's rules; `maxLinks` caps the links it keeps at once.
    public init(device secrets: DeviceSecrets, maxLinks: Int = 8) {
        self.secrets = secrets
        self.maxLinks = max(1, maxLinks)
    }

    /// The app's rules (it opens links, never accepts offers).
    public init(app: Void = ()) {
        self.secrets = nil
        self.maxLinks = 1
    }

    /// Device role, PROTOCOL.md 4 "Who may open a link". `answeredCall` is the engine's answered
    /// session and the user who answered it, if any. An accepted offer records the link.
    public mutating func receiveOffer(sessionId: String, from: String, auth: String,
                                      answeredCall: (sessionId: String, peer: String)?) -> OfferDecision {
        guard let secrets else { return .refuse(why: "an app does not accept offers") }
        guard P2PAuth.verify(auth, p2pPassword: secrets.p2pPassword, localKey: secrets.localKey, devId: secrets.devId) else {
            return .refuse(why: "wrong auth")
        }
        // A second offer replaces a link only from the user whose offer made it (the app
        // reconnecting); nobody takes over another user's link (issue 10, hostile peers).
        if let owner = links[sessionId], owner != from {
            return .refuse(why: "session '\(sessionId)' has a link of another user")
        }
        if links[sessionId] == nil, links.count >= maxLinks {
            return .refuse(why: "already \(links.count) P2P links (the most a device keeps)")
        }
        let answered = answeredCall.map { $0.sessionId == sessionId && $0.peer == from } ?? false
        guard answered || secrets.liveView else {
            return .refuse(why: "session '\(sessionId)' is not a call answered by '\(from)' and live view is off")
        }
        let replacing = links[sessionId] != nil
        links[sessionId] = from
        return .open(replacing: replacing)
    }

    /// A link of `sessionId` with `peer` exists now (app role: its offer went out; device role: a
    /// replacing link was opened after the old one closed).
    public mutating func opened(sessionId: String, peer: String) {
        links[sessionId] = peer
    }

    /// Whether a candidate, an `answer` or a `resolution` for `sessionId` from `from` counts: only
    /// from the link's peer.
    public func accepts(sessionId: String, from: String) -> Bool {
        links[sessionId] == from
    }

    /// A `disconnect` arrived: true (and the link is forgotten) when it comes from the link's peer;
    /// anyone else's is ignored.
    public mutating func receiveDisconnect(sessionId: String, from: String) -> Bool {
        guard accepts(sessionId: sessionId, from: from) else { return false }
        links.removeValue(forKey: sessionId)
        return true
    }

    /// The link was closed or lost locally (or could not be started).
    public mutating func closed(sessionId: String) {
        links.removeValue(forKey: sessionId)
    }

    public var sessions: [String] { Array(links.keys) }
}
