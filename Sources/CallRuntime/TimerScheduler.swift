import Dispatch
import Foundation
import HeapModule
import Synchronization

/// The real `TimerScheduling`, one timer structure for every engine that shares it (DESIGN.md
/// "Scale": a fleet's devices on one loop share one heap, never a `Task` per armed timer): a
/// binary min-heap of deadlines and one thread that sleeps until the earliest, then runs what is
/// due, in deadline order.
///
/// Deadlines come from the engine in unix milliseconds, which may come from the wire: the delay
/// is computed with saturating arithmetic, clamped to 0...`maximumDelayMs`, and kept on the
/// monotonic clock. State is in one `Mutex`; the thread sleeps on a semaphore (a counting wake-up,
/// so a signal between reading the heap and sleeping is never lost) with a monotonic timeout.
public final class TimerScheduler: TimerScheduling, Sendable {
    /// A scheduled timer; pass it to `cancel`.
    public typealias Token = TimerToken

    /// Longer delays are clamped (about 24 days; PROTOCOL.md 3.4 caps a call at 24 h anyway).
    public static let maximumDelayMs: Int64 = Int64(Int32.max)

    private struct Entry: Comparable, Sendable {
        var deadline: UInt64   // monotonic milliseconds
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    private enum Action: Sendable {
        /// Runs on the scheduler's thread.
        case inline(@Sendable () -> Void)
        /// Runs in a new task (the owner's hop onto its actor).
        case hop(@Sendable () async -> Void)
    }

    private struct State: Sendable {
        var heap = Heap<Entry>()
        var actions: [UInt64: Action] = [:]
        var nextId: UInt64 = 1
        var running = true
    }

    private enum Step {
        case stop, again
        case sleep(milliseconds: UInt64?)
        case fire(Action)
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    /// The process-wide scheduler (what a `Device` or `AppUser` uses unless it is given one).
    public static let shared = TimerScheduler(name: "ipcemu-timers")

    public init(name: String = "ipcemu-timers") {
        let thread = Thread { [self] in run() }  // the thread keeps the scheduler until `shutdown()`
        thread.name = name
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Stops the thread; scheduled timers never fire.
    public func shutdown() {
        state.withLock { state in
            state.running = false
            state.actions.removeAll()
            state.heap = Heap()
        }
        wakeup.signal()
    }

    /// Runs `action` in a new task at unix time `atMs`, given the time now `nowMs`.
    @discardableResult
    public func schedule(atMs: Int64, nowMs: Int64, _ action: @escaping @Sendable () async -> Void) -> Token {
        insert(.hop(action), atMs: atMs, nowMs: nowMs)
    }

    /// Runs `action` on the scheduler's thread (keep it short) at unix time `atMs`, given the
    /// time now `nowMs`.
    @discardableResult
    public func schedule(atMs: Int64, nowMs: Int64, _ action: @escaping @Sendable () -> Void) -> Token {
        insert(.inline(action), atMs: atMs, nowMs: nowMs)
    }

    private func insert(_ action: Action, atMs: Int64, nowMs: Int64) -> Token {
        let delay = timerDelayMs(atMs: atMs, nowMs: nowMs, maximumMs: Self.maximumDelayMs)
        let deadline = Self.monotonicMs() &+ UInt64(delay)
        let (id, earliest) = state.withLock { state -> (UInt64, Bool) in
            let id = state.nextId
            state.nextId &+= 1
            state.actions[id] = action
            state.heap.insert(Entry(deadline: deadline, id: id))
            return (id, state.heap.min?.id == id)
        }
        if earliest { wakeup.signal() }
        return Token(id: id)
    }

    /// Forgets a timer; a timer already running or run is not affected.
    public func cancel(_ token: Token) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: token.id) != nil else { return }
            // Its heap entry is skipped when it comes up. Cancelled entries past twice the live
            // ones are dropped at once (a fleet's 10,000 start-up timeouts, cancelled as the devices
            // come online, would otherwise hold the heap until their deadline).
            if state.heap.count > 2 * state.actions.count + Self.compactionSlack {
                let actions = state.actions
                state.heap = Heap(state.heap.unordered.filter { actions[$0.id] != nil })
            }
        }
    }

    /// Cancelled entries the heap may hold beyond the live ones before it is rebuilt.
    public static let compactionSlack = 256

    /// Timers scheduled and not yet fired or cancelled.
    public var pendingCount: Int { state.withLock { $0.actions.count } }

    /// Entries in the heap, cancelled ones not yet dropped included (what it holds in memory).
    public var heapCount: Int { state.withLock { $0.heap.count } }

    private func run() {
        while true {
            let step = state.withLock { state -> Step in
                guard state.running else { return .stop }
                guard let first = state.heap.min else { return .sleep(milliseconds: nil) }
                let now = Self.monotonicMs()
                if first.deadline > now { return .sleep(milliseconds: first.deadline - now) }
                _ = state.heap.removeMin()
                guard let action = state.actions.removeValue(forKey: first.id) else { return .again }  // cancelled
                return .fire(action)
            }
            switch step {
            case .stop:
                return
            case .again:
                continue
            case .sleep(nil):
                wakeup.wait()
            case .sleep(let milliseconds?):
                _ = wakeup.wait(timeout: .now() + .milliseconds(Int(clamping: milliseconds)))
            case .fire(.inline(let action)):
                action()
            case .fire(.hop(let action)):
                Task { await action() }
            }
        }
    }

    private static func monotonicMs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1000 &+ UInt64(ts.tv_nsec) / 1_000_000
    }
}
