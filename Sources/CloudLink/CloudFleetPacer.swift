import TuyaCloud

/// Spreads a fleet's requests to the cloud over time (issue 21 item 5): at most `perSecond`
/// admissions per second over all devices, each at least `1 / perSecond` s after the one before.
/// Only the requests that join a device are paced (iotdns, activation: `paces(_:)`); a device that
/// backs off after a refusal (the join machine's timers) does not hold back the others, it only
/// takes the next free slot when it tries again.
public actor CloudFleetPacer {
    public let perSecond: Double
    private let spacing: Duration
    private var next: ContinuousClock.Instant?
    /// Admissions so far (for the summary).
    public private(set) var admitted = 0

    /// `perSecond` must be greater than 0 (the command checks it; anything else admits at once).
    public init(perSecond: Double) {
        self.perSecond = perSecond
        let interval = perSecond > 0 && perSecond.isFinite ? 1 / perSecond : 0
        spacing = .nanoseconds(Int64((min(interval, 3600) * 1e9).rounded()))
    }

    /// The requests that count against the cloud's join rate: iotdns and activation.
    public static func paces(_ purpose: HTTPSRequest.Purpose) -> Bool {
        purpose == .resolveEndpoints || purpose == .activate
    }

    /// Returns when the caller's slot comes (at once when the last slot is `spacing` ago); returns
    /// early, without a slot, when the task is cancelled.
    @discardableResult
    public func admit() async -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        let slot = max(now, next ?? now)
        next = slot + spacing
        admitted += 1
        if slot > now {
            try? await Task.sleep(until: slot, clock: .continuous)
        }
        // The slot this request was given: 1/R after the one before it, whatever the scheduler's
        // lateness in waking the callers.
        return slot
    }

    /// A `CloudJoinRunner.Configuration.beforeRequest` that paces through this pacer.
    public nonisolated var beforeRequest: @Sendable (HTTPSRequest.Purpose) async -> Void {
        { [self] purpose in
            guard Self.paces(purpose) else { return }
            await admit()
        }
    }
}
