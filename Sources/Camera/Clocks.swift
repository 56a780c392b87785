#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two clocks a frame source reads: monotonic for pacing, wall for capture stamps.
public enum Clocks {
    /// Nanoseconds on CLOCK_MONOTONIC (the clock V4L2 stamps buffers with).
    public static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Unix time in milliseconds on the real clock.
    public static func unixMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Sleeps until `deadlineNs` on the monotonic clock (absolute, so errors never accumulate),
    /// waking at least every 50 ms to ask `shouldStop`. Returns false when told to stop.
    public static func sleep(untilMonotonicNs deadlineNs: UInt64, shouldStop: () -> Bool) -> Bool {
        while true {
            if shouldStop() { return false }
            let now = monotonicNs()
            if now >= deadlineNs { return true }
            let wake = min(deadlineNs, now + 50_000_000)
            var ts = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
            _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
        }
    }
}
