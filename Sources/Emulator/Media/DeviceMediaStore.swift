import CallRuntime
import Foundation

/// One device's snapshots and messages on disk (PROTOCOL.md 8.5), served read-only by the control
/// API at `/api/devices/<devId>/media/<name>`.
///
/// Files live in `<root>/<devId>/` (the devId escaped for the file system). Names are checked
/// (`validate`): no `/`, no `..`, no leading dot, `A-Z a-z 0-9 . _ -` only, `.jpg` or `.mp4`. A
/// file is written under a hidden temporary name and renamed into place, so a reader never sees
/// half a file. Past the device's `limits` (count or bytes) the oldest files are removed first.
/// Files already in the folder when the store opens (a configured folder reused) are kept and
/// count, oldest first by modification time.
public actor DeviceMediaStore {
    /// Counters; they only grow.
    public struct Statistics: Sendable, Equatable {
        public var stored = 0
        /// Files removed to stay within the limits.
        public var evicted = 0
        /// Names or sizes refused, and writes that failed.
        public var refused = 0
        /// Snapshots or messages that could not be taken (no camera, no video, coding).
        public var captureFailures = 0
        public var lastFailure: String?
    }

    public nonisolated let devId: String
    /// The device's folder.
    public nonisolated let directory: String
    public nonisolated let limits: MediaLimits

    /// Every file, oldest first.
    private var entries: [MediaRef] = []
    private var statistics = Statistics()

    /// The process's default root: a folder of its own under the system's temporary folder.
    public static let defaultRoot: String = {
        let base = FileManager.default.temporaryDirectory.path
        return (base.hasSuffix("/") ? base : base + "/") + "ipcemu-media-\(getpid())"
    }()

    /// Opens `<root>/<devId>/`, making it if missing. Never fails: a folder that cannot be made
    /// makes every `store` fail with the reason (the device runs on without media).
    /// What `storedAtMs` reads (the device's clock).
    private nonisolated let clock: any EngineClock

    public init(devId: String, root: String = DeviceMediaStore.defaultRoot, limits: MediaLimits = MediaLimits(),
                clock: any EngineClock = SystemClock()) {
        self.clock = clock
        self.devId = devId
        self.limits = limits
        let folder = (root.hasSuffix("/") ? root : root + "/") + Self.folderName(devId: devId)
        directory = folder
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        entries = Self.scan(folder: folder, devId: devId)
    }

    // MARK: Names

    /// The API path a file is served at (what DPs 154, 115, 185 and 212 carry).
    public static func apiPath(devId: String, name: String) -> String {
        let id = devId.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? devId
        return "/api/devices/\(id)/media/\(name)"
    }

    public nonisolated func apiPath(_ name: String) -> String { Self.apiPath(devId: devId, name: name) }

    /// `press-<callId>.jpg`
    public static func pressSnapshotName(callId: String) -> String { "press-\(callId).jpg" }
    /// `motion-<unix s>.jpg`
    public static func motionSnapshotName(unixSeconds: Int64) -> String { "motion-\(unixSeconds).jpg" }
    /// `message-<callId>.mp4`
    public static func messageName(callId: String) -> String { "message-\(callId).mp4" }

    static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    public static let maximumNameLength = 128

    /// Throws `badName` unless `name` is one the store may hold and serve.
    public static func validate(name: String) throws(MediaStoreError) {
        guard !name.isEmpty else { throw .badName(name, why: "empty") }
        guard name.count <= maximumNameLength else { throw .badName(String(name.prefix(40)) + "...", why: "longer than \(maximumNameLength) characters") }
        guard !name.contains("/") else { throw .badName(name, why: "contains '/'") }
        guard !name.contains("..") else { throw .badName(name, why: "contains '..'") }
        guard !name.hasPrefix(".") else { throw .badName(name, why: "starts with '.'") }
        guard name.allSatisfy({ nameCharacters.contains($0) }) else {
            throw .badName(name, why: "only letters, digits, '.', '_' and '-' are allowed")
        }
        guard MediaKind(name: name) != nil else { throw .badName(name, why: "must end in .jpg or .mp4") }
    }

    /// The devId as a folder name: bytes outside `A-Z a-z 0-9 _ -` (and a `.`) become `%XX`.
    static func folderName(devId: String) -> String {
        var out = ""
        for byte in devId.utf8 {
            let c = Character(UnicodeScalar(byte))
            if c != ".", c != "%", nameCharacters.contains(c) { out.append(c) }
            else { out += String(format: "%%%02X", byte) }
        }
        return out.isEmpty ? "%" : out
    }

    // MARK: Storing and reading

    /// Writes `bytes` as `name` (replacing a file of that name), then removes the oldest files
    /// beyond the limits.
    @discardableResult
    public func store(_ bytes: [UInt8], name: String, durationSeconds: Int? = nil) throws(MediaStoreError) -> MediaRef {
        do throws(MediaStoreError) {
            try Self.validate(name: name)
            guard bytes.count <= limits.maxBytes else { throw .tooLarge(name: name, bytes: bytes.count, limit: limits.maxBytes) }
            try makeDirectory()
            let temporary = temporaryPath(for: name)
            guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
                throw .io("cannot write \(temporary)")
            }
            return try adopt(temporary: temporary, name: name, bytes: bytes.count, durationSeconds: durationSeconds)
        } catch {
            statistics.refused += 1
            throw error
        }
    }

    /// Moves a finished file (a message the recorder wrote at `temporaryPath(for:)`) into the
    /// store as `name`.
    @discardableResult
    public func storeFile(at path: String, name: String, durationSeconds: Int? = nil) throws(MediaStoreError) -> MediaRef {
        do throws(MediaStoreError) {
            try Self.validate(name: name)
            let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
            guard let size else { throw .io("no file at \(path)") }
            guard size <= limits.maxBytes else {
                try? FileManager.default.removeItem(atPath: path)
                throw .tooLarge(name: name, bytes: size, limit: limits.maxBytes)
            }
            return try adopt(temporary: path, name: name, bytes: size, durationSeconds: durationSeconds)
        } catch {
            statistics.refused += 1
            throw error
        }
    }

    /// Makes the device's folder if it is missing (it was removed, or could not be made at first).
    public nonisolated func makeDirectory() throws(MediaStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot make the folder \(directory): \(error.localizedDescription)")
        }
    }

    /// A hidden path in the device's folder for a file being made (never listed or served).
    public nonisolated func temporaryPath(for name: String) -> String {
        directory + "/.partial-\(UUID().uuidString)-" + name.filter { Self.nameCharacters.contains($0) && $0 != "/" }
    }

    private func adopt(temporary: String, name: String, bytes: Int, durationSeconds: Int?) throws(MediaStoreError) -> MediaRef {
        let final = directory + "/" + name
        do {
            if FileManager.default.fileExists(atPath: final) { try FileManager.default.removeItem(atPath: final) }
            try FileManager.default.moveItem(atPath: temporary, toPath: final)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .io("cannot move \(name) into \(directory): \(error.localizedDescription)")
        }
        entries.removeAll { $0.name == name }
        guard let kind = MediaKind(name: name) else { throw .badName(name, why: "must end in .jpg or .mp4") }
        let ref = MediaRef(name: name, path: apiPath(name), kind: kind, bytes: bytes,
                           storedAtMs: clock.nowMs(), durationSeconds: durationSeconds)
        entries.append(ref)
        statistics.stored += 1
        evict(keeping: name)
        return ref
    }

    /// Removes the oldest files until both limits hold (never `keeping`, the file just stored).
    private func evict(keeping: String) {
        var total = entries.reduce(0) { $0 + $1.bytes }
        while entries.count > limits.maxFiles || total > limits.maxBytes,
              let index = entries.firstIndex(where: { $0.name != keeping }) {
            let old = entries.remove(at: index)
            total -= old.bytes
            try? FileManager.default.removeItem(atPath: directory + "/" + old.name)
            statistics.evicted += 1
        }
    }

    /// The file's bytes, or nil for a name the store does not hold (or may not serve).
    public func read(_ name: String) -> [UInt8]? {
        guard (try? Self.validate(name: name)) != nil, entries.contains(where: { $0.name == name }) else { return nil }
        guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { return nil }
        return [UInt8](data)
    }

    /// The file's reference, or nil.
    public func ref(_ name: String) -> MediaRef? { entries.first { $0.name == name } }

    /// Every file, oldest first.
    public func list() -> [MediaRef] { entries }

    /// Removes one file; false when there was none.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        guard let index = entries.firstIndex(where: { $0.name == name }) else { return false }
        entries.remove(at: index)
        try? FileManager.default.removeItem(atPath: directory + "/" + name)
        return true
    }

    /// Removes every file and the device's folder.
    public func removeAll() {
        entries = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var stats: Statistics { statistics }

    func noteCaptureFailure(_ error: MediaCaptureError) {
        statistics.captureFailures += 1
        statistics.lastFailure = error.description
    }

    /// The valid files already in `folder`, oldest first; leftover partial files are removed.
    private static func scan(folder: String, devId: String) -> [MediaRef] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var found: [MediaRef] = []
        for name in names {
            let path = folder + "/" + name
            if name.hasPrefix(".partial-") {
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            guard (try? validate(name: name)) != nil, let kind = MediaKind(name: name),
                  let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  (attributes[.type] as? FileAttributeType) == .typeRegular
            else { continue }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let modified = (attributes[.modificationDate] as? Date) ?? Date(timeIntervalSince1970: 0)
            found.append(MediaRef(name: name, path: apiPath(devId: devId, name: name), kind: kind, bytes: size,
                                  storedAtMs: Int64((modified.timeIntervalSince1970 * 1000).rounded())))
        }
        return found.sorted { ($0.storedAtMs, $0.name) < ($1.storedAtMs, $1.name) }
    }
}
