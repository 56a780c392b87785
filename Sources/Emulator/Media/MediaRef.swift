import Foundation

/// One file a device serves read-only on its control API (PROTOCOL.md 8.5): a press or motion
/// snapshot (JPEG) or a left message (MP4).
public struct MediaRef: Sendable, Equatable, Hashable, Codable {
    /// The file's name in the device's store (`press-<callId>.jpg`, `motion-<t>.jpg`,
    /// `message-<callId>.mp4`).
    public var name: String
    /// Where the control API serves it: `/api/devices/<devId>/media/<name>` (what the DPs carry).
    public var path: String
    public var kind: MediaKind
    /// The file's size.
    public var bytes: Int
    /// When it was stored, unix milliseconds.
    public var storedAtMs: Int64
    /// A message's length in whole seconds (DP 212 `duration`); nil for a picture.
    public var durationSeconds: Int?

    public init(name: String, path: String, kind: MediaKind, bytes: Int, storedAtMs: Int64, durationSeconds: Int? = nil) {
        self.name = name
        self.path = path
        self.kind = kind
        self.bytes = bytes
        self.storedAtMs = storedAtMs
        self.durationSeconds = durationSeconds
    }
}

/// What a stored file is, from its extension.
public enum MediaKind: String, Sendable, Equatable, Hashable, Codable {
    /// `.jpg`: `image/jpeg`.
    case image
    /// `.mp4`: `video/mp4`.
    case video

    /// The kind of a file name, or nil for an extension the store does not keep.
    public init?(name: String) {
        if name.hasSuffix(".jpg") { self = .image }
        else if name.hasSuffix(".mp4") { self = .video }
        else { return nil }
    }

    /// The HTTP content type it is served with.
    public var contentType: String {
        switch self {
        case .image: return "image/jpeg"
        case .video: return "video/mp4"
        }
    }
}

/// How much a device keeps: the oldest files go first when either bound is passed.
public struct MediaLimits: Sendable, Equatable {
    /// At most this many files (default 100).
    public var maxFiles: Int
    /// At most this many bytes in all (default 64 MiB: several 10 s messages and many snapshots).
    public var maxBytes: Int

    public init(maxFiles: Int = 100, maxBytes: Int = 64 << 20) {
        self.maxFiles = max(1, maxFiles)
        self.maxBytes = max(1, maxBytes)
    }
}

/// Why the store refused or failed.
public enum MediaStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A name with `/`, `..`, a leading dot, characters outside `A-Z a-z 0-9 . _ -`, more than
    /// 128 characters, or an extension other than `.jpg`/`.mp4`.
    case badName(String, why: String)
    /// One file larger than the device's whole byte budget.
    case tooLarge(name: String, bytes: Int, limit: Int)
    /// The file system said no.
    case io(String)

    public var description: String {
        switch self {
        case .badName(let name, let why): return "media name '\(name)': \(why)"
        case .tooLarge(let name, let bytes, let limit): return "media '\(name)' is \(bytes) bytes, over the device's \(limit)"
        case .io(let why): return "media store: \(why)"
        }
    }
}

/// Why taking a snapshot or recording a message failed (the device goes on without it).
public enum MediaCaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The profile has no camera.
    case noCamera
    /// The camera's feed gave no key frame in time, or could not start.
    case noVideo(String)
    /// JPEG or MP4 coding failed.
    case coding(String)
    case store(MediaStoreError)

    public var description: String {
        switch self {
        case .noCamera: return "the profile has no camera"
        case .noVideo(let why): return "no video: \(why)"
        case .coding(let why): return "coding: \(why)"
        case .store(let error): return error.description
        }
    }
}
