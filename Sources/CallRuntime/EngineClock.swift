import Foundation
import Synchronization

/// The clock an engine host reads "now" from (the engine itself never reads one). Injected, so a
/// test can drive a device at a time of its choosing; production uses `SystemClock`.
public protocol EngineClock: Sendable {
    /// Unix time in milliseconds.
    func nowMs() -> Int64
}

extension EngineClock {
    /// Unix time in whole seconds (the envelope's `t`).
    public func nowSeconds() -> Int64 { nowMs() / 1000 }
}

/// The real clock (`CLOCK_REALTIME`).
public struct SystemClock: EngineClock {
    public init() {}
    public func nowMs() -> Int64 { WallClock.nowMs() }
}

/// A clock that stands still until it is moved (tests: deadlines and expiry without waiting).
public final class ManualClock: EngineClock, Sendable {
    private let now: Mutex<Int64>

    public init(nowMs: Int64 = WallClock.nowMs()) { now = Mutex(nowMs) }

    public func nowMs() -> Int64 { now.withLock { $0 } }

    /// Moves the clock by `ms` (saturating).
    public func advance(byMs ms: Int64) { now.withLock { now in now = now.addingReportingOverflow(ms).overflow ? .max : now + ms } }

    public func set(nowMs: Int64) { now.withLock { $0 = nowMs } }
}
