import Foundation

/// When each step of a P2P link happened, as the app saw it: where the time from `answer` to the
/// first frame goes (`bench media` prints it step by step).
public struct LinkTimeline: Sendable, Equatable {
    /// The app's link was created (its pipeline built and started).
    public var opened: Date?
    /// webrtcbin made the offer (set as the local description); it goes out at once.
    public var offerMade: Date?
    /// The device's 302 `answer` came.
    public var answerReceived: Date?
    /// The peer connection (ICE and DTLS) reported connected.
    public var connected: Date?

    public init() {}
}

/// A link timeline behind a lock: steps are recorded from GStreamer threads and the app's actor.
final class LockedTimeline: @unchecked Sendable {
    private let lock = NSLock()
    private var timeline = LinkTimeline()

    /// Records a step once: a later call for the same step (a renegotiation) keeps the first time.
    func record(_ step: WritableKeyPath<LinkTimeline, Date?>) {
        let now = Date()
        lock.withLock { if timeline[keyPath: step] == nil { timeline[keyPath: step] = now } }
    }

    var snapshot: LinkTimeline { lock.withLock { timeline } }
}
