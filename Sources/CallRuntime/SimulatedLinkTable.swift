import Synchronization

/// What the simulated link factories of both sides share (`SimulatedDeviceLinks`,
/// `SimulatedAppLinks`; issue 23 "Seams"): the clock and scheduler their links run on, each
/// session's connect delay (nil: the link never comes up), and the last link made per session, so
/// a test or the simulator can find it and break it.
public final class SimulatedLinkTable<Link: AnyObject & Sendable>: Sendable {
    public let clock: any EngineClock
    public let scheduler: any TimerScheduling
    private let connectDelayMs: @Sendable (_ sessionId: String) -> Int64?
    private let made = Mutex<[String: Link]>([:])

    public init(clock: any EngineClock, scheduler: any TimerScheduling,
                connectDelayMs: @escaping @Sendable (_ sessionId: String) -> Int64?) {
        self.clock = clock
        self.scheduler = scheduler
        self.connectDelayMs = connectDelayMs
    }

    /// How long the session's link takes to come up (nil: never).
    public func connectDelay(sessionId: String) -> Int64? { connectDelayMs(sessionId) }

    /// Keeps `link` as the session's newest.
    public func remember(_ link: Link, sessionId: String) { made.withLock { $0[sessionId] = link } }

    /// The last link made for the session (open or closed).
    public func link(sessionId: String) -> Link? { made.withLock { $0[sessionId] } }
}

extension TimerScheduling {
    /// A simulated link's "connected" moment: `connect` runs `delayMs` (clamped at 0, saturating)
    /// after `clock`'s now; nil delay: never (no timer, nil token).
    public func scheduleConnect(afterMs delayMs: Int64?, on clock: any EngineClock,
                                _ connect: @escaping @Sendable () async -> Void) -> TimerToken? {
        guard let delayMs else { return nil }
        let now = clock.nowMs()
        let (at, overflow) = now.addingReportingOverflow(max(0, delayMs))
        return schedule(atMs: overflow ? .max : at, nowMs: now, connect)
    }
}
