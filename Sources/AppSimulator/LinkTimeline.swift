import Foundation
import Synchronization

/// When each step of a P2P link happened, as the app saw it: where the time from `answer` to the
/// first frame goes (`bench media` prints it step by step).
public struct LinkTimeline: Sendable, Equatable {
    /// The app's link was created (its pipeline built and started).
    public var opened: Date?
    /// webrtcbin made the offer (set as the local description). A link opened after the answer
    /// sends it at once; one prepared while the call rang holds it until the answer.
    public var offerMade: Date?
    /// The call's 308 `answer` came (answer -> first frame counts from here; nil for live view).
    public var callAnswered: Date?
    /// The offer went to the device.
    public var offerSent: Date?
    /// The device's 302 `answer` came.
    public var answerReceived: Date?
    /// The device's first ICE candidate came (trickled after its answer).
    public var firstRemoteCandidate: Date?
    /// ICE found a working pair (webrtcbin's ice-connection-state connected); DTLS follows.
    public var iceConnected: Date?
    /// The peer connection (ICE and DTLS) reported connected.
    public var connected: Date?
    /// The device's first video packet came out of the app's jitter buffer.
    public var firstVideoPacket: Date?
    /// The app's receive branch (depayloader, decoder) was linked to it.
    public var receiveBranchLinked: Date?

    /// The link was made and its offer ready before the call was answered (prepared while it rang):
    /// from the answer on, only the offer/answer exchange and the connection remained.
    public var preparedBeforeAnswer: Bool {
        guard let offerMade, let callAnswered else { return false }
        return offerMade <= callAnswered
    }

    public init() {}
}

/// A link timeline behind a Mutex: steps are recorded from GStreamer threads and the app's actor.
final class LockedTimeline: Sendable {
    private let timeline = Mutex(LinkTimeline())

    /// Records a step once: a later call for the same step (a renegotiation) keeps the first time.
    func record(_ step: WritableKeyPath<LinkTimeline, Date?>) {
        let now = Date()
        timeline.withLock { t in if t[keyPath: step] == nil { t[keyPath: step] = now } }
    }

    /// Sets a step to a time taken elsewhere (the answer, which comes before the link is used).
    func set(_ step: WritableKeyPath<LinkTimeline, Date?>, to date: Date) {
        timeline.withLock { $0[keyPath: step] = date }
    }

    var snapshot: LinkTimeline { timeline.withLock { $0 } }
}
