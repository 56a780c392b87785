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

    /// `seconds` as whole milliseconds, rounded, saturating at the Int64 range (NaN is 0): a
    /// duration from outside (control API, command line) never traps the conversion.
    public static func milliseconds(seconds: Double) -> Int64 {
        let ms = (seconds * 1000).rounded()
        if ms.isNaN { return 0 }
        if ms >= 9_223_372_036_854_775_807.0 { return .max }
        if ms <= -9_223_372_036_854_775_808.0 { return .min }
        return Int64(ms)
    }
}
