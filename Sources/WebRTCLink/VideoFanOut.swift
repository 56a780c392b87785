// One encoded H.264 stream handed to many links (issue 11: encode once, fan out). A link that
// joins starts at a key frame: it gets nothing until the next IDR, and its join asks the source
// for one, rate-limited so that many joins in a short time cost a few IDRs, not one each. A link
// that asks for it starts at once from the last key frame when that one is recent (issue 24
// item 6: `RecentUnits`, the key frame and the deltas after it, replayed in order).
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
    /// Subscribers that started at once from the recent key frame (no key frame asked).
    public var startsFromRecent = 0
    /// Access units handed to those subscribers from the recent units (not counted in `deliveries`).
    public var recentUnitsReplayed = 0
    /// Subscribers that fell behind while being caught up (more than `RecentUnits.Limit.maxUnits`
    /// came meanwhile) and waited for a key frame instead.
    public var catchUpsAbandoned = 0
    /// Subscribers whose delivery lane fell more than `VideoFanOut.laneBacklogLimit` units behind
    /// (a machine out of CPU): they skip to the next key frame, which is asked for once the lane
    /// has sent what it held.
    public var laneOverflows = 0
    /// Frames pushed into the shared encoder that feeds this fan-out (0 for a stream passed
    /// through), and of those the ones its input queue dropped (`SharedH264Encoder.Statistics
    /// .framesDropped`): filled in by whoever owns both (`VideoFeeds`), not counted by the fan-out.
    public var encoderFrames = 0
    public var encoderFramesDropped = 0

    public init() {}

    /// Adds another fan-out's counts (a process's feeds summed, `VideoFeeds.fanOutStatistics`).
    public mutating func add(_ o: FanOutStatistics) {
        accessUnits += o.accessUnits
        keyFrames += o.keyFrames
        keyFrameRequests += o.keyFrameRequests
        keyFramesForced += o.keyFramesForced
        deliveries += o.deliveries
        deltasSkipped += o.deltasSkipped
        startsFromRecent += o.startsFromRecent
        recentUnitsReplayed += o.recentUnitsReplayed
        catchUpsAbandoned += o.catchUpsAbandoned
        laneOverflows += o.laneOverflows
        encoderFrames += o.encoderFrames
        encoderFramesDropped += o.encoderFramesDropped
    }
}

public final class VideoFanOut: Sendable {
    /// Gets one access unit (Annex B), borrowed for the duration of the call, on the source's
    /// thread (or the subscriber's delivery lane); each subscriber's units come in order, one at
    /// a time.
    public typealias Handler = @Sendable (_ accessUnit: UnsafeRawBufferPointer, _ isKeyFrame: Bool) -> Void
    /// The same, with the unit's RTP packets when the fan-out has a packetizer (one payloader per
    /// feed, `RTPPackets`): a link sends its copies of them.
    public typealias PacketHandler =
        @Sendable (_ accessUnit: UnsafeRawBufferPointer, _ isKeyFrame: Bool, _ packets: RTPPackets?) -> Void

    /// Where handlers run.
    public enum Delivery: Sendable, Hashable {
        /// On the source's thread, one subscriber after another (few subscribers, cheap handlers).
        case inline
        /// On this many serial lanes (a subscriber always on the same one): the source's thread
        /// only hands each unit to the lanes, and a handler may do real work (a link sends the
        /// unit through its whole send path on the lane; issue 24 item 5).
        case lanes(Int)

        /// One lane per core, at most 4.
        public static var perCore: Delivery { .lanes(min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))) }
    }

    /// Units a lane may have waiting before its subscribers skip to the next key frame (half a
    /// second of 30 fps). The lane then gets nothing new until it has sent what it held; only
    /// then is the key frame asked for (an IDR that came while it was still behind would be
    /// skipped by its subscribers and cost every other link its size: at 200 links the lanes
    /// overflowed at each of the 4 forced IDRs a second and 8.5% of the units were delivered).
    public static let laneBacklogLimit = 15

    private final class Lane: Sendable {
        let queue: DispatchQueue
        let waiting = Atomic<Int>(0)
        init(index: Int) { queue = DispatchQueue(label: "ipcemu.fanout.lane\(index)", qos: .userInitiated) }
    }
    private let lanes: [Lane]

    private struct Subscriber {
        var handler: PacketHandler
        var phase: Phase
    }

    private enum Phase {
        /// Deltas are skipped until a key frame.
        case waitingForKeyFrame
        /// Being handed the recent units on another thread; what comes meanwhile waits in
        /// `pending` (at most `RecentUnits.Limit.maxUnits`), handed over by that thread too.
        case catchingUp(pending: [RecentUnits.Unit], thenWaitForKeyFrame: Bool)
        case live
    }

    /// Everything that changes, behind one Mutex; handlers are called with it released.
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var recent: RecentUnits
        var nextId = 1
        var lastForced: DispatchTime?
        var deferredRequest = false
        var statistics = FanOutStatistics()
        /// Lanes that overflowed and have not yet sent what they held: nothing new is queued on
        /// them, and their subscribers wait for the key frame asked once they have.
        var overflowedLanes = Set<Int>()
    }
    private let state: Mutex<State>
    /// Forces a key frame at the source; nil when the source cannot (a clip read as it is: the
    /// next IDR of the clip is awaited).
    private let forceKeyFrame: (@Sendable () -> Void)?
    /// Shortest time between two forced key frames.
    public let minimumKeyFrameSpacing: Duration

    /// What is kept for subscribers that start from the recent key frame.
    public let recentLimit: RecentUnits.Limit
    /// Makes each unit's RTP packets once, for every subscriber (nil: units only).
    private let packetizer: H264Packetizer?

    public init(minimumKeyFrameSpacing: Duration = .milliseconds(250), recentLimit: RecentUnits.Limit = .standard,
                delivery: Delivery = .inline, packetizer: H264Packetizer? = nil, forceKeyFrame: (@Sendable () -> Void)?) {
        self.packetizer = packetizer
        switch delivery {
        case .inline: lanes = []
        case .lanes(let count): lanes = (0..<max(1, count)).map(Lane.init(index:))
        }
        self.minimumKeyFrameSpacing = minimumKeyFrameSpacing
        self.forceKeyFrame = forceKeyFrame
        self.recentLimit = recentLimit
        state = Mutex(State(recent: RecentUnits(limit: recentLimit)))
    }

    /// Adds a subscriber: it gets access units from the next key frame on, which this asks for.
    /// With `startFromRecentKeyFrame`, when the last key frame is at most `recentLimit.maxAge`
    /// old, the subscriber gets it and the deltas after it at once instead (on another thread,
    /// in order, then every unit as it comes; no key frame is asked). Returns its id for
    /// `unsubscribe` and `restartAtKeyFrame`.
    public func subscribe(startFromRecentKeyFrame: Bool = false, _ handler: @escaping Handler) -> Int {
        subscribe(startFromRecentKeyFrame: startFromRecentKeyFrame, withPackets: { unit, isKeyFrame, _ in handler(unit, isKeyFrame) })
    }

    /// The same, with each unit's RTP packets (nil when the fan-out has no packetizer, or it made
    /// none).
    public func subscribe(startFromRecentKeyFrame: Bool = false, withPackets handler: @escaping PacketHandler) -> Int {
        let now = DispatchTime.now().uptimeNanoseconds
        let (id, replay): (Int, [RecentUnits.Unit]) = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            let recent = startFromRecentKeyFrame ? s.recent.servable(at: now) : []
            if recent.isEmpty {
                s.subscribers[id] = Subscriber(handler: handler, phase: .waitingForKeyFrame)
            } else {
                s.subscribers[id] = Subscriber(handler: handler, phase: .catchingUp(pending: [], thenWaitForKeyFrame: false))
                s.statistics.startsFromRecent += 1
            }
            return (id, recent)
        }
        if replay.isEmpty {
            requestKeyFrame()
        } else {
            DispatchQueue.global(qos: .userInitiated).async { [self] in catchUp(id, handler: handler, first: replay) }
        }
        return id
    }

    /// Hands `first`, then what came meanwhile, to a catching-up subscriber until nothing is
    /// left; then it gets units as they come (the switch is made under the lock, so nothing is
    /// delivered twice, out of order, or from two threads at once).
    private func catchUp(_ id: Int, handler: PacketHandler, first: [RecentUnits.Unit]) {
        var batch = first
        while true {
            for unit in batch {
                unit.bytes.withUnsafeBytes { handler($0, unit.isKeyFrame, unit.packets) }
            }
            let replayed = batch.count
            enum Next { case more([RecentUnits.Unit]), done, restart }
            let next: Next = state.withLock { s in
                s.statistics.recentUnitsReplayed += replayed
                guard case .catchingUp(let pending, let thenWait)? = s.subscribers[id]?.phase else { return .done }
                if thenWait {
                    s.subscribers[id]?.phase = .waitingForKeyFrame
                    return .restart
                }
                if pending.isEmpty {
                    s.subscribers[id]?.phase = .live
                    return .done
                }
                s.subscribers[id]?.phase = .catchingUp(pending: [], thenWaitForKeyFrame: false)
                return .more(pending)
            }
            switch next {
            case .more(let units): batch = units
            case .done: return
            case .restart:
                requestKeyFrame()
                return
            }
        }
    }

    public func unsubscribe(_ id: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    /// The subscriber skips deltas again until the next key frame, which this asks for (a peer
    /// that lost the start of the stream).
    public func restartAtKeyFrame(_ id: Int) {
        let ask: Bool = state.withLock { s in
            switch s.subscribers[id]?.phase {
            case .catchingUp(let pending, _)?:
                // The catching-up thread still calls the handler: it switches, and asks.
                s.subscribers[id]?.phase = .catchingUp(pending: pending, thenWaitForKeyFrame: true)
                return false
            case nil: return false
            default:
                s.subscribers[id]?.phase = .waitingForKeyFrame
                return true
            }
        }
        if ask { requestKeyFrame() }
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

    /// Hands one access unit to every subscriber that may take it (and keeps it in the recent
    /// units; the copy is made before the lock is taken).
    public func deliver(_ accessUnit: UnsafeRawBufferPointer, isKeyFrame: Bool) {
        let now = DispatchTime.now().uptimeNanoseconds
        let packets = packetizer?.packetize(accessUnit, isKeyFrame: isKeyFrame)
        let unit = recentLimit.keeps
            ? RecentUnits.Unit(bytes: Array(accessUnit), isKeyFrame: isKeyFrame, atNanos: now, packets: packets) : nil
        let laneCount = lanes.count
        let backlog = lanes.map { $0.waiting.load(ordering: .relaxed) }
        var askKeyFrame = false
        let (handlers, batches): ([PacketHandler], [[PacketHandler]]) = state.withLock { s in
            s.statistics.accessUnits += 1
            if isKeyFrame { s.statistics.keyFrames += 1 }
            if let unit { s.recent.add(unit) }
            // An overflowed lane that has sent everything it held takes units again from the
            // key frame asked now; one still behind stays closed.
            for lane in s.overflowedLanes where backlog[lane] == 0 {
                s.overflowedLanes.remove(lane)
                askKeyFrame = true
            }
            for lane in 0..<laneCount where backlog[lane] >= Self.laneBacklogLimit { s.overflowedLanes.insert(lane) }
            var out: [PacketHandler] = []
            var batches = [[PacketHandler]](repeating: [], count: laneCount)
            if laneCount == 0 { out.reserveCapacity(s.subscribers.count) }
            for (id, subscriber) in s.subscribers {
                switch subscriber.phase {
                case .live: break
                case .waitingForKeyFrame:
                    guard isKeyFrame else {
                        s.statistics.deltasSkipped += 1
                        continue
                    }
                    s.subscribers[id]?.phase = .live
                case .catchingUp(var pending, let thenWait):
                    // Its catching-up thread hands this over after the recent units.
                    if thenWait { continue }
                    guard let unit, pending.count < recentLimit.maxUnits else {
                        s.subscribers[id]?.phase = .catchingUp(pending: [], thenWaitForKeyFrame: true)
                        s.statistics.catchUpsAbandoned += 1
                        continue
                    }
                    pending.append(unit)
                    s.subscribers[id]?.phase = .catchingUp(pending: pending, thenWaitForKeyFrame: false)
                    continue
                }
                if laneCount == 0 {
                    out.append(subscriber.handler)
                    continue
                }
                let lane = id % laneCount
                if s.overflowedLanes.contains(lane) {
                    // A live subscriber loses its place (counted once); one that was waiting
                    // keeps waiting (the key frame it would start from is skipped).
                    if case .live = subscriber.phase { s.statistics.laneOverflows += 1 }
                    s.subscribers[id]?.phase = .waitingForKeyFrame
                    continue
                }
                batches[lane].append(subscriber.handler)
            }
            s.statistics.deliveries += out.count + batches.reduce(0) { $0 + $1.count }
            return (out, batches)
        }
        for handler in handlers { handler(accessUnit, isKeyFrame, packets) }
        if laneCount > 0 {
            let bytes = unit?.bytes ?? Array(accessUnit)
            for (index, batch) in batches.enumerated() where !batch.isEmpty {
                let lane = lanes[index]
                lane.waiting.add(1, ordering: .relaxed)
                lane.queue.async {
                    bytes.withUnsafeBytes { buffer in
                        for handler in batch { handler(buffer, isKeyFrame, packets) }
                    }
                    lane.waiting.subtract(1, ordering: .relaxed)
                }
            }
        }
        if askKeyFrame { requestKeyFrame() }
    }
}
