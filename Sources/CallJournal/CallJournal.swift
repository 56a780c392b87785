import CallEngine
import CallRuntime
import ControlErrors
import Foundation
import IPCWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The call journal of one device: append-only JSON Lines, one line per call event in or out and
/// one per ended call. Each line goes to the file in a single `write(2)` on an `O_APPEND`
/// descriptor, so a process killed at any moment (SIGKILL) leaves whole lines only; a file that
/// ends in a partial line (a crash of something else, a full disk) is continued on a new line and
/// its content is never rewritten. The last `memoryLimit` entries are also kept in memory for the
/// control API, with or without a file.
public actor CallJournal {
    public nonisolated let devId: String
    /// The file, or nil for a memory-only journal.
    public nonisolated let path: String?
    private var file: JournalFile?
    /// True when the file is a fleet's one file per process (closed by its owner, not here).
    private let sharesFile: Bool
    private var recent: [JournalEntry] = []
    private let memoryLimit: Int
    private var writeFailures = 0
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Opens (creating if needed) `directory/<devId>.jsonl` for appending.
    public init(devId: String, directory: String?, memoryLimit: Int = 1000) throws(ControlError) {
        self.devId = devId
        self.memoryLimit = memoryLimit
        self.sharesFile = false
        guard let directory else {
            self.path = nil
            return
        }
        let file = try JournalFile(directory: directory, fileName: Self.fileName(devId: devId))
        self.path = file.path
        self.file = file
    }

    /// A device's journal in a fleet: its lines go to the process's one `shared` file (each line
    /// carries the devId), so a fleet holds one descriptor for its journal, not one per device.
    public init(devId: String, shared: JournalFile?, memoryLimit: Int = 50) {
        self.devId = devId
        self.memoryLimit = memoryLimit
        self.sharesFile = true
        self.path = shared?.path
        self.file = shared
    }

    /// `<devId>.jsonl`, with any `/` made harmless.
    public static func fileName(devId: String) -> String {
        devId.replacingOccurrences(of: "/", with: "_") + ".jsonl"
    }

    static func endsWithPartialLine(path: String) -> Bool {
        let rfd = open(path, O_RDONLY | O_CLOEXEC)
        guard rfd >= 0 else { return false }
        defer { Glibc.close(rfd) }
        let size = lseek(rfd, 0, SEEK_END)
        guard size > 0, lseek(rfd, size - 1, SEEK_SET) == size - 1 else { return false }
        var last: UInt8 = 0
        guard read(rfd, &last, 1) == 1 else { return false }
        return last != UInt8(ascii: "\n")
    }

    /// Closes the file (a shared one is only let go); later entries are kept in memory only.
    public func closeFile() {
        if !sharesFile { file?.close() }
        file = nil
    }

    // MARK: Recording

    /// One call event the device received (`in`) or sent (`out`).
    public func record(direction: JournalDirection, message m: CallMessage, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, direction: direction, message: m, at: ms, time: Self.iso(ms)))
    }

    /// One ended call, with its outcome.
    public func record(ended r: CallRecord, at ms: Int64 = WallClock.nowMs()) {
        append(JournalEntry(device: devId, ended: r, at: ms, time: Self.iso(ms)))
    }

    func append(_ entry: JournalEntry) {
        recent.append(entry)
        if recent.count > memoryLimit { recent.removeFirst(recent.count - memoryLimit) }
        guard let file else { return }
        // Plain data: encoding cannot fail short of a bug, and then the line counts as not written.
        guard let line = try? encoder.encode(entry), file.append(Array(line) + [UInt8(ascii: "\n")]) else {
            writeFailures += 1
            return
        }
    }

    // MARK: Reading

    /// The most recent entries, oldest first (at most `limit`).
    public func entries(limit: Int = 100) -> [JournalEntry] {
        Array(recent.suffix(max(0, limit)))
    }

    /// Lines that could not be written whole (disk full, ...).
    public var failedWrites: Int { writeFailures }

    static func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// An append-only JSON Lines file: one `write(2)` per line on an `O_APPEND` descriptor, so lines
/// of many writers (a fleet's devices) never interleave and a kill leaves whole lines only.
public final class JournalFile: Sendable {
    public let path: String
    /// The descriptor (-1 once closed); held across each write so that close waits for it.
    private let fd: Mutex<Int32>

    /// Opens (creating if needed) `directory/fileName` for appending.
    public init(directory: String, fileName: String) throws(ControlError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ControlError(status: 500, "cannot create journal directory '\(directory)': \(error.localizedDescription)")
        }
        let path = directory + "/" + fileName
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw ControlError(status: 500, "cannot open journal '\(path)': \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.fd = Mutex(fd)
        if CallJournal.endsWithPartialLine(path: path) {
            // A line cut short by a crash stays as it is; we start on a fresh line.
            _ = "\n".withCString { write(fd, $0, 1) }
        }
    }

    /// A fleet process's journal: `directory/<name>.jsonl`.
    public convenience init(directory: String, name: String) throws(ControlError) {
        try self.init(directory: directory, fileName: CallJournal.fileName(devId: name))
    }

    /// Writes one whole line; false if it could not be written whole (disk full...). A line cut
    /// short is cut off again (the file is truncated to where it began), so every line in the file
    /// stays whole and the lines after the disk has room again parse (issue 10).
    func append(_ bytes: [UInt8]) -> Bool {
        fd.withLock { fd in
            guard fd >= 0 else { return true }
            let start = lseek(fd, 0, SEEK_END)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written > 0, written < bytes.count, start >= 0 { _ = ftruncate(fd, start) }
            return written == bytes.count
        }
    }

    public func close() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    deinit {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
        }
    }
}

/// Seen from the device: a message it received, or one it sent.
public enum JournalDirection: String, Sendable {
    case `in`
    case out
}
