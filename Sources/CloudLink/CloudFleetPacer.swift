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
    /// When the last request was let through (its real moment, after any late wake-up).
    private var lastLetThrough: ContinuousClock.Instant?
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

    /// Returns when the caller's slot comes (at once when the last request went `spacing` ago),
    /// with the moment it was let through; returns early when the task is cancelled.
    ///
    /// Two requests are never let through less than `spacing` apart, even when the scheduler
    /// wakes a caller late: a caller that wakes within `spacing` of the one before it (that one
    /// woke late, this one on time) waits out the rest, and the slots after it move on.
    @discardableResult
    public func admit() async -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        var slot = max(now, next ?? now)
        next = slot + spacing
        admitted += 1
        while true {
            if slot > ContinuousClock.now {
                try? await Task.sleep(until: slot, clock: .continuous)
                if Task.isCancelled { return ContinuousClock.now }
            }
            let woke = ContinuousClock.now
            if let last = lastLetThrough, woke < last + spacing {
                slot = last + spacing
                next = max(next ?? slot, slot + spacing)
                continue
            }
            lastLetThrough = woke
            return woke
        }
    }

    /// A `CloudJoinRunner.Configuration.beforeRequest` that paces through this pacer.
    public nonisolated var beforeRequest: @Sendable (HTTPSRequest.Purpose) async -> Void {
        { [self] purpose in
            guard Self.paces(purpose) else { return }
            await admit()
        }
    }
}
