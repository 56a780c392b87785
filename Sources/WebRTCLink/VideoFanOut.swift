// One encoded H.264 stream handed to many links (issue 11: encode once, fan out). A link that
// joins starts at a key frame: it gets nothing until the next IDR, and its join asks the source
// for one, rate-limited so that many joins in a short time cost a few IDRs, not one each.
import Dispatch
import Foundation
import Synchronization

/// Counters of a fan-out. They only grow.
public struct FanOutStatistics: Sendable, Hashable {
    /// Access units that came in (from the shared encoder or reader).
    public var accessUnits = 0
    /// Of those, key frames.
    public var keyFrames = 0
    /// Key frames asked of the source (a join, a PLI/FIR, a stream switch) before rate limiting.
    public var keyFrameRequests = 0
    /// Key frames actually forced at the source.
    public var keyFramesForced = 0
    /// Deliveries of an access unit to one subscriber.
    public var deliveries = 0
    /// Delta frames not delivered to a subscriber waiting for its first key frame.
    public var deltasSkipped = 0

    public init() {}
}

public final class VideoFanOut: Sendable {
    /// Gets one access unit (Annex B), borrowed for the duration of the call, on the source's
    /// thread; return quickly (push into an appsrc, which copies).
    public typealias Handler = @Sendable (_ accessUnit: UnsafeRawBufferPointer, _ isKeyFrame: Bool) -> Void

    private struct Subscriber {
        var handler: Handler
        var waitingForKeyFrame: Bool
    }

    /// Everything that changes, behind one Mutex; handlers are called with it released.
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextId = 1
        var lastForced: DispatchTime?
        var deferredRequest = false
        var statistics = FanOutStatistics()
    }
    private let state = Mutex(State())
    /// Forces a key frame at the source; nil when the source cannot (a clip read as it is: the
    /// next IDR of the clip is awaited).
    private let forceKeyFrame: (@Sendable () -> Void)?
    /// Shortest time between two forced key frames.
    public let minimumKeyFrameSpacing: Duration

    public init(minimumKeyFrameSpacing: Duration = .milliseconds(250), forceKeyFrame: (@Sendable () -> Void)?) {
        self.minimumKeyFrameSpacing = minimumKeyFrameSpacing
        self.forceKeyFrame = forceKeyFrame
    }

    /// Adds a subscriber: it gets access units from the next key frame on, which this asks for.
    /// Returns its id for `unsubscribe` and `restartAtKeyFrame`.
    public func subscribe(_ handler: @escaping Handler) -> Int {
        let id: Int = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            s.subscribers[id] = Subscriber(handler: handler, waitingForKeyFrame: true)
            return id
        }
        requestKeyFrame()
        return id
    }

    public func unsubscribe(_ id: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    /// The subscriber skips deltas again until the next key frame, which this asks for (a peer
    /// that lost the start of the stream).
    public func restartAtKeyFrame(_ id: Int) {
        state.withLock { $0.subscribers[id]?.waitingForKeyFrame = true }
        requestKeyFrame()
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    public var stats: FanOutStatistics { state.withLock { $0.statistics } }

    /// Asks the source for a key frame: at once if the last forced one is older than
    /// `minimumKeyFrameSpacing`, otherwise once that spacing has passed (requests in between
    /// share it).
    public func requestKeyFrame() {
        guard let forceKeyFrame else {
            state.withLock { $0.statistics.keyFrameRequests += 1 }
            return
        }
        let spacing = minimumKeyFrameSpacing.nanoseconds
        let now = DispatchTime.now()
        let decision: UInt64? = state.withLock { s in
            s.statistics.keyFrameRequests += 1
            if s.deferredRequest { return nil }
            if let last = s.lastForced, now.uptimeNanoseconds &- last.uptimeNanoseconds < spacing {
                s.deferredRequest = true
                return spacing - (now.uptimeNanoseconds &- last.uptimeNanoseconds)
            }
            s.lastForced = now
            s.statistics.keyFramesForced += 1
            return 0
        }
        guard let delay = decision else { return }
        if delay == 0 {
            forceKeyFrame()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: now + .nanoseconds(Int(clamping: delay))) { [weak self] in
            guard let self else { return }
            self.state.withLock { s in
                s.deferredRequest = false
                s.lastForced = DispatchTime.now()
                s.statistics.keyFramesForced += 1
            }
            forceKeyFrame()
        }
    }

    /// Hands one access unit to every subscriber that may take it.
    public func deliver(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool) {
        let handlers: [Handler] = state.withLock { s in
            s.statistics.accessUnits += 1
            if isKeyFrame { s.statistics.keyFrames += 1 }
            var out: [Handler] = []
            out.reserveCapacity(s.subscribers.count)
            for (id, subscriber) in s.subscribers {
                if subscriber.waitingForKeyFrame {
                    guard isKeyFrame else {
                        s.statistics.deltasSkipped += 1
                        continue
                    }
                    s.subscribers[id]?.waitingForKeyFrame = false
                }
                out.append(subscriber.handler)
            }
            s.statistics.deliveries += out.count
            return out
        }
        for handler in handlers { handler(accessUnit, isKeyFrame) }
    }
}
