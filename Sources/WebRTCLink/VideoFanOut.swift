// One encoded H.264 stream handed to many links (issue 11: encode once, fan out). A link that
// joins starts at a key frame: it gets nothing until the next IDR, and its join asks the source
// for one, rate-limited so that many joins in a short time cost a few IDRs, not one each.
import Dispatch
import Foundation

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

public final class VideoFanOut: @unchecked Sendable {
    /// Gets one access unit (Annex B), borrowed for the duration of the call, on the source's
    /// thread; return quickly (push into an appsrc, which copies).
    public typealias Handler = @Sendable (_ accessUnit: UnsafeRawBufferPointer, _ isKeyFrame: Bool) -> Void

    private struct Subscriber {
        var handler: Handler
        var waitingForKeyFrame: Bool
    }

    private let lock = NSLock()
    private var subscribers: [Int: Subscriber] = [:]
    private var nextId = 1
    private var lastForced: DispatchTime?
    private var deferredRequest = false
    private var statistics = FanOutStatistics()
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
        let id: Int = lock.withLock {
            let id = nextId
            nextId += 1
            subscribers[id] = Subscriber(handler: handler, waitingForKeyFrame: true)
            return id
        }
        requestKeyFrame()
        return id
    }

    public func unsubscribe(_ id: Int) {
        _ = lock.withLock { subscribers.removeValue(forKey: id) }
    }

    /// The subscriber skips deltas again until the next key frame, which this asks for (a peer
    /// that lost the start of the stream).
    public func restartAtKeyFrame(_ id: Int) {
        lock.withLock { subscribers[id]?.waitingForKeyFrame = true }
        requestKeyFrame()
    }

    public var subscriberCount: Int { lock.withLock { subscribers.count } }
    public var stats: FanOutStatistics { lock.withLock { statistics } }

    /// Asks the source for a key frame: at once if the last forced one is older than
    /// `minimumKeyFrameSpacing`, otherwise once that spacing has passed (requests in between
    /// share it).
    public func requestKeyFrame() {
        guard let forceKeyFrame else {
            lock.withLock { statistics.keyFrameRequests += 1 }
            return
        }
        let spacing = minimumKeyFrameSpacing.nanoseconds
        let now = DispatchTime.now()
        let decision: UInt64? = lock.withLock {
            statistics.keyFrameRequests += 1
            if deferredRequest { return nil }
            if let last = lastForced, now.uptimeNanoseconds &- last.uptimeNanoseconds < spacing {
                deferredRequest = true
                return spacing - (now.uptimeNanoseconds &- last.uptimeNanoseconds)
            }
            lastForced = now
            statistics.keyFramesForced += 1
            return 0
        }
        guard let delay = decision else { return }
        if delay == 0 {
            forceKeyFrame()
            return
        }
        DispatchQueue.global().asyncAfter(deadline: now + .nanoseconds(Int(clamping: delay))) { [weak self] in
            guard let self else { return }
            self.lock.withLock {
                self.deferredRequest = false
                self.lastForced = DispatchTime.now()
                self.statistics.keyFramesForced += 1
            }
            forceKeyFrame()
        }
    }

    /// Hands one access unit to every subscriber that may take it.
    public func deliver(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool) {
        let handlers: [Handler] = lock.withLock {
            statistics.accessUnits += 1
            if isKeyFrame { statistics.keyFrames += 1 }
            var out: [Handler] = []
            out.reserveCapacity(subscribers.count)
            for (id, subscriber) in subscribers {
                if subscriber.waitingForKeyFrame {
                    guard isKeyFrame else {
                        statistics.deltasSkipped += 1
                        continue
                    }
                    subscribers[id]?.waitingForKeyFrame = false
                }
                out.append(subscriber.handler)
            }
            statistics.deliveries += out.count
            return out
        }
        for handler in handlers { handler(accessUnit, isKeyFrame) }
    }
}
