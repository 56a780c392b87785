import Foundation

/// The real clock the glue feeds the sans-IO call engine with (the engine itself never reads one).
public enum WallClock {
    /// Unix time in milliseconds.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Unix time in whole seconds (the envelope's `t`).
    public static func nowSeconds() -> Int64 { nowMs() / 1000 }
}
