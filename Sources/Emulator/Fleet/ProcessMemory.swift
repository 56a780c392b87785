import Foundation

/// Resident memory of a process, from /proc (what `ipcemu fleet` reports per device).
public enum ProcessMemory {
    /// Resident set size in bytes of `pid` (default: this process); nil if it cannot be read.
    public static func residentBytes(pid: Int32? = nil) -> Int? {
        let path = pid.map { "/proc/\($0)/statm" } ?? "/proc/self/statm"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
