/// A Unix socket's full accept backlog: a connect that finds it full is tried again within
/// milliseconds (`startAttempt`), not failed with the back-off.
extension ClientConnection {
    /// The delay before connect number `busy + 1` after `busy` in a row found a Unix socket's
    /// accept backlog full (`EAGAIN` at the nonblocking connect: the broker has not accepted what
    /// waits yet), or nil past `busyRetryLimit` (then the attempt fails as any other, with the
    /// back-off). Jittered and doubling from 2 ms to 32 ms: about 0.5 s in all, for a broker that was
    /// not scheduled for a moment, where the back-off (0.1 s doubling) kept devices waiting seconds
    /// (docs/fleet.md "Devices over Unix sockets"). A TCP listener's full backlog drops the SYN
    /// instead (the kernel retransmits it), so this is for Unix sockets only.
    static func busyRetryDelay(after busy: Int, random: Double = Double.random(in: 0.5...1.5)) -> Double? {
        guard busy >= 0, busy < busyRetryLimit else { return nil }
        return 0.002 * Double(1 << min(busy, 4)) * random
    }

    /// Connects in a row that may find the backlog full before the attempt counts as failed.
    static let busyRetryLimit = 20
}
