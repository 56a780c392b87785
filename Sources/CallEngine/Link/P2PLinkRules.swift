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
///
/// The device's link lifecycle (live-view limits, the connect-timeout reaper, who may switch a
/// link's stream) is in `P2PLinkRules+Device.swift`.
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

    /// What the rules know of one link besides its peer.
    public struct LinkDetail: Sendable, Equatable {
        /// Not the answered call's link (it counts against the live-view limits).
        public var liveView: Bool
        /// Each link opened gets a new one: a timer of a replaced link finds another generation.
        public var generation: UInt64
        /// It came up (the connect-timeout reaper leaves it alone).
        public var up: Bool
    }

    /// Session id -> the peer the link is with (device role: the offerer; app role: the device).
    public internal(set) var links: [String: String] = [:]
    /// Session id -> what else is known of its link (same keys as `links`).
    public internal(set) var details: [String: LinkDetail] = [:]
    let secrets: DeviceSecrets?
    /// At most this many links at once (live view may have several watchers) **[ours]**.
    public let maxLinks: Int
    /// At most this many live-view links at once (the profile's `liveViewLimit`; issue 11).
    public let liveViewLimit: Int
    /// A link not up this long after its offer is closed (the profile's `connectTimeout`, kept
    /// within 1 s ... 1 h; issues 10 and 11).
    public let connectTimeoutMs: Int64
    var nextGeneration: UInt64 = 1

    /// The device's rules; `maxLinks` caps the links it keeps at once, `liveViewLimit` its
    /// live-view links, `connectTimeoutMs` how long a link may take to come up.
    public init(device secrets: DeviceSecrets, maxLinks: Int = 8, liveViewLimit: Int = .max, connectTimeoutMs: Int64 = 10_000) {
        self.secrets = secrets
        self.maxLinks = max(1, maxLinks)
        self.liveViewLimit = max(0, liveViewLimit)
        self.connectTimeoutMs = min(max(1000, connectTimeoutMs), 3_600_000)
    }

    /// The app's rules (it opens links, never accepts offers).
    public init(app: Void = ()) {
        self.secrets = nil
        self.maxLinks = 1
        self.liveViewLimit = 0
        self.connectTimeoutMs = 10_000
    }

    /// Device role, PROTOCOL.md 4 "Who may open a link". `answeredCall` is the engine's answered
    /// session and the user who answered it, if any. An accepted offer records the link.
    /// (`admitOffer` also applies the live-view limits and tells the reaper's deadline.)
    public mutating func receiveOffer(sessionId: String, from: String, auth: String,
                                      answeredCall: (sessionId: String, peer: String)?) -> OfferDecision {
        switch admitOffer(sessionId: sessionId, from: from, auth: auth, answeredCall: answeredCall, nowMs: 0) {
        case .open(let replacing, _, _, _): .open(replacing: replacing)
        case .refuse(let why, _): .refuse(why: why)
        }
    }

    /// A link of `sessionId` with `peer` exists now (app role: its offer went out; device role: a
    /// link opened outside `admitOffer`).
    public mutating func opened(sessionId: String, peer: String) {
        links[sessionId] = peer
        details[sessionId] = LinkDetail(liveView: false, generation: takeGeneration(), up: false)
    }

    mutating func takeGeneration() -> UInt64 {
        defer { nextGeneration &+= 1 }
        return nextGeneration
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
        closed(sessionId: sessionId)
        return true
    }

    /// The link was closed or lost locally (or could not be started).
    public mutating func closed(sessionId: String) {
        links.removeValue(forKey: sessionId)
        details.removeValue(forKey: sessionId)
    }

    public var sessions: [String] { Array(links.keys) }
}
