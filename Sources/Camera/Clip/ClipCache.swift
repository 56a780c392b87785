import Foundation
import Synchronization

/// Parsed clips, one per file per process: devices naming the same file (unchanged since it was
/// parsed) share one copy. H.264 and H.265 clips each keep one.
final class ClipCache<Clip: Sendable>: Sendable {
    private let entries = Mutex<[String: (modified: Date?, clip: Clip)]>([:])

    /// The clip of `path`, parsed by `load` unless a copy of the same file is here already.
    func clip(at path: String, load: (String) throws(CameraError) -> Clip) throws(CameraError) -> Clip {
        let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        if let hit = entries.withLock({ $0[path] }), hit.modified == modified { return hit.clip }
        let clip = try load(path)
        entries.withLock { $0[path] = (modified, clip) }
        return clip
    }
}
