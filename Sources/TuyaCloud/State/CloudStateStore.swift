import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cloud state file (PROTOCOL.md 9: "kept across restarts in a state folder"): one JSON file
/// per device in the state directory, `tuya-cloud-<uuid>.json`, mode 0600 (it holds the keys).
///
/// Written atomically: a temporary file in the same directory (created 0600), written whole,
/// fsync'd, renamed over the old file, and the directory fsync'd; a crash leaves the old file or
/// the new one, never half of either. A file that does not read back as a `CloudState` is reported
/// (`LoadResult.corrupt`) and the caller treats it as absent; nothing here crashes on its content.
public struct CloudStateStore: Sendable {
    public let directory: String
    public let path: String
    /// A state file is a few KiB; anything over this is not ours.
    public static let sizeLimit = 1 << 20

    public init(directory: String, uuid: String) {
        self.directory = directory
        let safe = String(uuid.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") ? Character($0) : "_" })
        self.path = (directory as NSString).appendingPathComponent("tuya-cloud-\(safe).json")
    }

    public enum LoadResult: Sendable, Equatable {
        case absent
        case loaded(CloudState)
        /// The file exists but is unreadable or not a state; `why` says what is wrong.
        case corrupt(why: String)

        /// The state, or nil when absent or corrupt.
        public var state: CloudState? {
            if case .loaded(let s) = self { return s }
            return nil
        }
    }

    public func load() -> LoadResult {
        guard FileManager.default.fileExists(atPath: path) else { return .absent }
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? NSNumber, size.intValue > Self.sizeLimit {
                return .corrupt(why: "\(path) has \(size.intValue) bytes, more than a state file can (\(Self.sizeLimit))")
            }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            return .corrupt(why: "\(path) cannot be read: \(error.localizedDescription)")
        }
        do {
            return .loaded(try JSONDecoder().decode(CloudState.self, from: data))
        } catch {
            return .corrupt(why: "\(path) is not a cloud state file: \(Self.describe(error))")
        }
    }

    public func save(_ state: CloudState) throws(CloudStateStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(state)) } catch { throw .encodingFailed(String(describing: error)) }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .writeFailed(path: directory, why: "cannot create the state directory: \(error.localizedDescription)")
        }
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .writeFailed(path: temporary, why: String(cString: strerror(errno))) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let why = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw .writeFailed(path: temporary, why: why)
            }
            written += n
        }
        if fsync(fd) != 0 {
            let why = String(cString: strerror(errno))
            close(fd)
            unlink(temporary)
            throw .writeFailed(path: temporary, why: "fsync: \(why)")
        }
        close(fd)
        if rename(temporary, path) != 0 {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw .writeFailed(path: path, why: "rename: \(why)")
        }
        syncDirectory()
    }

    /// Deletes the file (`ipcemu cloud unpair`); an absent file is not an error.
    public func erase() throws(CloudStateStoreError) {
        if unlink(path) != 0, errno != ENOENT {
            throw .writeFailed(path: path, why: String(cString: strerror(errno)))
        }
        syncDirectory()
    }

    private func syncDirectory() {
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _): "the field '\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "the field '\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: String(describing: error)
        }
    }
}

public enum CloudStateStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case encodingFailed(String)
    case writeFailed(path: String, why: String)

    public var description: String {
        switch self {
        case .encodingFailed(let why): "the cloud state cannot be encoded: \(why)"
        case .writeFailed(let path, let why): "cannot write \(path): \(why)"
        }
    }
}
