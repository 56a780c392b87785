/// Time arithmetic that cannot trap. Deadlines come from the wire and durations from profiles, the
/// control API and the SDK user; PROTOCOL.md 3.4: "Every number from the wire is range-checked
/// before any arithmetic". Everything the engine adds to or subtracts from a time goes through here.
extension Int64 {
    /// `self + other`, saturating at `Int64.min`/`Int64.max` instead of trapping.
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, saturating at `Int64.min`/`Int64.max` instead of trapping.
    func subtractingSaturating(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other > 0 ? .min : .max
    }

    /// `self * other`, saturating instead of trapping.
    func multipliedSaturating(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }
}

/// PROTOCOL.md 3.4 **[ours]**: "a deadline more than 24 h ahead counts as 24 h ahead".
public let maxCallDeadlineAheadMs: Int64 = 24 * 3_600_000

enum WireTime {
    /// A call's deadline as received, with the far future capped at 24 h from `now`. A deadline
    /// at or before `now` (zero and negative values included) stays as it is: the caller refuses
    /// it as `expired`.
    static func callDeadline(_ raw: Int64, now: Int64) -> Int64 {
        min(raw, now.addingSaturating(maxCallDeadlineAheadMs))
    }
}
