import CallEngine
import CallRuntime
import IPCWire

/// What a device holds only once it has done something beyond being online (docs/fleet.md
/// "Memory per device"): its calls' record, its links and their rules, the camera's health, the
/// refusal replies' limiter, the reply-delay fault's outbox. Made on first
/// use; an idle fleet device has none, and reads give the starting values. Actor-isolated: only
/// its `Device` touches it.
final class DeviceActivity {
    var callsEnded = 0
    var lastCall: CallRecord?
    var pressSnapshots: [(callId: String, ref: MediaRef?)] = []
    var warnedOutsideSchema: Set<DPId> = []
    var delayedOutbox: [(dueMs: Int64, payload: [UInt8], what: String)] = []
    var droppedOnPurpose: LogLevel?
    var links: [String: any DeviceMediaLink] = [:]
    var linkTimers: [String: LinkTimer] = [:]
    var camera = CameraHealth()
    var linkRules: P2PLinkRules
    var closedMedia = MediaTotals()
    var linkPumps: [String: Task<Void, Never>] = [:]
    var refusalReplies = RefusalReplyLimiter()

    init(linkRules: P2PLinkRules) {
        self.linkRules = linkRules
    }
}

extension Device {
    /// The activity, made now if it was not yet.
    private var active: DeviceActivity {
        if let activity { return activity }
        let made = DeviceActivity(linkRules: makeLinkRules())
        activity = made
        return made
    }

    /// PROTOCOL.md 4: the link rules a device starts with (from its profile).
    func makeLinkRules() -> P2PLinkRules {
        let profile = self.profile
        return P2PLinkRules(device: P2PLinkRules.DeviceSecrets(
            devId: devId, p2pPassword: profile.identity.p2pPassword,
            localKey: profile.identity.localKey, liveView: profile.capabilities.liveView),
            maxLinks: Self.linkCap(liveViewLimit: profile.capabilities.liveViewLimit),
            liveViewLimit: profile.capabilities.liveViewLimit,
            connectTimeoutMs: WallClock.milliseconds(seconds: profile.timers.connectTimeout))
    }

    var callsEnded: Int {
        get { activity?.callsEnded ?? 0 }
        _modify { yield &active.callsEnded }
    }
    var lastCall: CallRecord? {
        get { activity?.lastCall }
        _modify { yield &active.lastCall }
    }
    /// PROTOCOL.md 8.5: the press snapshot of each doorbell call still remembered (for DP 212 at
    /// its ring timeout), at most a few.
    var pressSnapshots: [(callId: String, ref: MediaRef?)] {
        get { activity?.pressSnapshots ?? [] }
        _modify { yield &active.pressSnapshots }
    }
    /// Profile DPs the cloud's schema lacks that were already warned about (once each).
    var warnedOutsideSchema: Set<DPId> {
        get { activity?.warnedOutsideSchema ?? [] }
        _modify { yield &active.warnedOutsideSchema }
    }
    /// Replies held back by the reply-delay fault, in order, each with when it is due.
    var delayedOutbox: [(dueMs: Int64, payload: [UInt8], what: String)] {
        get { activity?.delayedOutbox ?? [] }
        _modify { yield &active.delayedOutbox }
    }
    /// Set by `dropConnection`: the level of the next "broker unreachable" line.
    var droppedOnPurpose: LogLevel? {
        get { activity?.droppedOnPurpose }
        _modify { yield &active.droppedOnPurpose }
    }
    var links: [String: any DeviceMediaLink] {
        get { activity?.links ?? [:] }
        _modify { yield &active.links }
    }
    /// Per link: its generation in `linkRules` and its connect-timeout reaper (until it is up).
    var linkTimers: [String: LinkTimer] {
        get { activity?.linkTimers ?? [:] }
        _modify { yield &active.linkTimers }
    }
    /// What the camera of the links last reported, and how often it was lost.
    var camera: CameraHealth {
        get { activity?.camera ?? CameraHealth() }
        _modify { yield &active.camera }
    }
    /// PROTOCOL.md 4: who may open, replace and close a link (sans-IO, CallEngine).
    var linkRules: P2PLinkRules {
        get { activity?.linkRules ?? makeLinkRules() }
        _modify { yield &active.linkRules }
    }
    var closedMedia: MediaTotals {
        get { activity?.closedMedia ?? MediaTotals() }
        _modify { yield &active.closedMedia }
    }
    var linkPumps: [String: Task<Void, Never>] {
        get { activity?.linkPumps ?? [:] }
        _modify { yield &active.linkPumps }
    }
    /// PROTOCOL.md 3.4: replies to refused messages, at most 5 a second per sender and 50 per
    /// device (issue 23; `Device+RefusalReplies`).
    var refusalReplies: RefusalReplyLimiter {
        get { activity?.refusalReplies ?? RefusalReplyLimiter() }
        _modify { yield &active.refusalReplies }
    }
}
