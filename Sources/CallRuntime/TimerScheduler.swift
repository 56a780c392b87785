import HeapModule
import CallEngine
import Foundation

/// One timer structure for every engine that shares it (DESIGN.md "Scale": a fleet's devices on
/// one loop share one heap, never a `Task` per armed timer): a binary min-heap of deadlines and
/// one thread that sleeps until the earliest, then runs what is due, in deadline order.
///
/// Deadlines come from the engine in unix milliseconds, which may come from the wire: the delay
/// is computed with saturating arithmetic (a deadline of `Int64.max` or a negative one is safe),
/// clamped to 0...`maximumDelayMs`, and kept on the monotonic clock.
public final class TimerScheduler: @unchecked Sendable {
    /// A scheduled timer; pass it to `cancel`.
    public struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// Longer delays are clamped (about 24 days; PROTOCOL.md 3.4 caps a call at 24 h anyway).
    public static let maximumDelayMs: Int64 = Int64(Int32.max)

    private struct Entry: Comparable {
        var deadline: UInt64   // monotonic milliseconds
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool { a.deadline < b.deadline }
    }

    private let condition = NSCondition()
    private var heap = Heap<Entry>()
    private var actions: [UInt64: @Sendable () -> Void] = [:]
    private var nextId: UInt64 = 1
    private var running = true
    private var thread: Thread?

    /// The process-wide scheduler (what a `Device` uses unless it is given one).
    public static let shared = TimerScheduler(name: "ipcemu-timers")

    public init(name: String = "ipcemu-timers") {
        let thread = Thread { self.run() }  // the thread keeps the scheduler until `shutdown()`
        thread.name = name
        thread.stackSize = 256 * 1024
        self.thread = thread
        thread.start()
    }

    /// Stops the thread; scheduled timers never fire.
    public func shutdown() {
        condition.lock()
        running = false
        actions.removeAll()
        heap = Heap()
        condition.signal()
        condition.unlock()
    }

    /// Runs `action` (on the scheduler's thread: keep it short, hop to an actor) at unix time
    /// `atMs`, given the time now `nowMs`.
    @discardableResult
    public func schedule(atMs: Int64, nowMs: Int64, _ action: @escaping @Sendable () -> Void) -> Token {
        let (difference, overflow) = atMs.subtractingReportingOverflow(nowMs)
        let delay: Int64 = overflow ? (atMs > nowMs ? Self.maximumDelayMs : 0) : min(max(0, difference), Self.maximumDelayMs)
        let deadline = Self.monotonicMs() &+ UInt64(delay)
        condition.lock()
        let id = nextId
        nextId &+= 1
        actions[id] = action
        heap.insert(Entry(deadline: deadline, id: id))
        if heap.min?.id == id { condition.signal() }
        condition.unlock()
        return Token(id: id)
    }

    /// Forgets a timer; a timer already running or run is not affected.
    public func cancel(_ token: Token) {
        condition.lock()
        actions.removeValue(forKey: token.id)   // its heap entry is skipped when it comes up
        condition.unlock()
    }

    /// Timers scheduled and not yet fired or cancelled.
    public var pendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return actions.count
    }

    private func run() {
        condition.lock()
        while running {
            guard let first = heap.min else {
                condition.wait()
                continue
            }
            let now = Self.monotonicMs()
            if first.deadline > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.deadline - now) / 1000))
                continue
            }
            _ = heap.popMin()
            guard let action = actions.removeValue(forKey: first.id) else { continue }  // cancelled
            condition.unlock()
            action()
            condition.lock()
        }
        condition.unlock()
    }

    private static func monotonicMs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1000 &+ UInt64(ts.tv_nsec) / 1_000_000
    }
}

/// One engine's armed timers on a shared `TimerScheduler` (the per-engine table: arming a timer
/// replaces the one armed under the same id). Lives inside the actor that owns the engine.
public struct ScheduledTimers: Sendable {
    public let scheduler: TimerScheduler
    private var armed: [CallTimer: TimerScheduler.Token] = [:]

    public init(scheduler: TimerScheduler = .shared) {
        self.scheduler = scheduler
    }

    /// Arms `timer` for unix time `atMs`; `fire` runs on the scheduler's thread (hop to the actor
    /// there and feed `.timerFired` to the engine, which ignores stale timers).
    public mutating func arm(_ timer: CallTimer, atMs: Int64, nowMs: Int64, fire: @escaping @Sendable (CallTimer) -> Void) {
        if let old = armed[timer] { scheduler.cancel(old) }
        armed[timer] = scheduler.schedule(atMs: atMs, nowMs: nowMs) { fire(timer) }
    }

    public mutating func cancel(_ timer: CallTimer) {
        if let token = armed.removeValue(forKey: timer) { scheduler.cancel(token) }
    }

    /// Forgets a timer that has fired.
    public mutating func fired(_ timer: CallTimer) { armed.removeValue(forKey: timer) }

    public mutating func cancelAll() {
        for token in armed.values { scheduler.cancel(token) }
        armed.removeAll()
    }

    public var armedCount: Int { armed.count }
}
