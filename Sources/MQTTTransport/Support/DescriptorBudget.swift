#if canImport(Glibc)
import Glibc
#endif

/// The open-file budget of this process (DESIGN.md "Scale": descriptors are the first wall).
///
/// libmosquitto 2.0.11 (Debian 12) opens three descriptors per client: its socket and a socketpair
/// our clients give back at once (`MosquittoSocketpair`), so each holds one (three where the pair
/// cannot be given back). The runtime needs some of its own (libdispatch's thread-pool monitor
/// dies when none is left), so a fleet keeps `reserve` free and never plans past the limit.
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors one MQTT client holds: 1, or 3 where libmosquitto's socketpair stays open.
    public static var perClient: Int { MosquittoSocketpair.releasable ? 1 : 3 }
    /// Descriptors kept free for the runtime, the control API, the journal and logs.
    public static let defaultReserve = 256

    /// The soft limit in force (what this process may open).
    public var limit: Int
    /// The hard limit (how far the soft limit may be raised without privileges).
    public var hardLimit: Int
    /// Descriptors open now.
    public var open: Int
    public var reserve: Int

    /// MQTT clients that still fit: (limit - open - reserve) / perClient.
    public var clientsThatFit: Int {
        max(0, (limit - open - reserve) / Self.perClient)
    }

    /// Descriptors `clients` more MQTT clients need, the reserve included.
    public static func needed(clients: Int, reserve: Int = defaultReserve) -> Int {
        let (product, overflow) = clients.multipliedReportingOverflow(by: perClient)
        return overflow ? Int.max : product.addingReportingOverflow(reserve).partialValue
    }

    /// Raises the soft limit to the hard limit (never fails: on error the limit stays) and
    /// returns the budget in force afterwards.
    @discardableResult
    public static func raiseToHardLimit(reserve: Int = defaultReserve) -> DescriptorBudget {
        var limits = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0, limits.rlim_cur < limits.rlim_max {
            limits.rlim_cur = limits.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits)
        }
        return current(reserve: reserve)
    }

    /// The budget now, without changing anything.
    public static func current(reserve: Int = defaultReserve) -> DescriptorBudget {
        var limits = rlimit()
        var soft = 1024
        var hard = 1024
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 {
            soft = Int(clamping: limits.rlim_cur)
            hard = Int(clamping: limits.rlim_max)
        }
        return DescriptorBudget(limit: soft, hardLimit: hard, open: openDescriptors(), reserve: reserve)
    }

    /// Descriptors open in this process (entries of /proc/self/fd, less the one used to list it).
    public static func openDescriptors() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let first = entry.pointee.d_name.0
            if first != 46 { count += 1 }  // skip "." and ".."
        }
        return max(0, count - 1)
    }

    /// One sentence for a person: what was needed and the limit.
    public func shortage(clients: Int) -> String {
        "out of descriptors: \(clients) more MQTT clients need \(clients * Self.perClient) descriptor\(clients * Self.perClient == 1 ? "" : "s") "
            + "(\(Self.perClient) each) plus a reserve of \(reserve), but \(open) of the limit of \(limit) "
            + "are open (hard limit \(hardLimit)); raise `ulimit -n` or spread the devices over more processes"
    }
}
