import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Tests that stream video, spawn `ipcemu` processes, browsers or qemu each need a good share of a
/// core for their timing to mean anything. `swift test` runs every test at once by default; on a
/// 2-core machine that starves them (heartbeats time out, frame counts come short). A test or
/// suite marked `.heavy` runs only while it holds one of a few permits shared by the whole test
/// process (every test target is linked into one); light tests still run beside them in parallel.
///
/// The number of permits is `IPCEMU_TEST_HEAVY_PARALLEL` (default 2). A serial run
/// (`--no-parallel`, scripts/test.sh) never waits. Swift Testing applies a test's `.timeLimit`
/// around its scoping traits, so the wait for a permit counts against it: heavy tests carry
/// generous limits (they guard against hangs, not slowness).
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    /// Takes every permit: no other heavy test runs meanwhile (for a test that reads a
    /// process-wide figure, such as the number of live GStreamer pipelines).
    public var exclusive = false

    public var isRecursive: Bool { true }

    /// One scope per test case (a suite's scope would hold a permit for all its tests while they
    /// wait for permits of their own).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let gate = HeavyTestGate.shared
        let held = HeavyTestGate.heldByThisTest
        let wanted = exclusive ? gate.permits : 1
        // A suite's `.heavy` and a test's `.heavy(exclusive: true)` both apply: the inner one gives
        // back what the outer took and waits for all of it at once (never holds while it waits).
        guard wanted > held else { return try await function() }
        gate.release(held)
        await gate.acquire(wanted)
        let result: Result<Void, any Error>
        do {
            try await HeavyTestGate.$heldByThisTest.withValue(wanted) { try await function() }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        gate.release(wanted)
        // The outer scope (if any) gives back what it took when it ends: take that back first.
        await gate.acquire(held)
        try result.get()
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Runs with the other heavy tests a few at a time (see `HeavyTestTrait`).
    public static var heavy: Self { HeavyTestTrait() }
    /// Runs with no other heavy test at the same time.
    public static func heavy(exclusive: Bool) -> Self { HeavyTestTrait(exclusive: exclusive) }
}

/// A counting semaphore for async code: waiters queue in order of arrival and the first one is
/// served as soon as enough permits are back (a waiter for many is not overtaken by later ones).
public final class HeavyTestGate: Sendable {
    public static let shared = HeavyTestGate(permits: HeavyTestGate.permitsFromEnvironment())

    /// The permits the current test holds (0 outside a heavy test).
    @TaskLocal public static var heldByThisTest = 0

    private struct State {
        var available: Int
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var mostHeld = 0

        mutating func take(_ count: Int, of permits: Int) {
            available -= count
            mostHeld = max(mostHeld, permits - available)
        }
    }

    public let permits: Int
    private let state: Mutex<State>

    public init(permits: Int) {
        self.permits = max(1, permits)
        state = Mutex(State(available: max(1, permits)))
    }

    /// How many acquirers are waiting.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// The most permits held at once so far.
    public var mostHeldAtOnce: Int { state.withLock { $0.mostHeld } }

    static func permitsFromEnvironment() -> Int {
        guard let raw = getenv("IPCEMU_TEST_HEAVY_PARALLEL"), let n = Int(String(cString: raw)), n > 0 else { return 2 }
        return n
    }

    public func acquire(_ count: Int = 1) async {
        let count = min(max(count, 0), permits)
        guard count > 0 else { return }
        let permits = self.permits
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted: Bool = state.withLock { s in
                if s.waiters.isEmpty && s.available >= count {
                    s.take(count, of: permits)
                    return true
                }
                s.waiters.append((count, continuation))
                return false
            }
            if granted { continuation.resume() }
        }
    }

    public func release(_ count: Int = 1) {
        let count = min(max(count, 0), permits)
        guard count > 0 else { return }
        let permits = self.permits
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.available += count
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = s.waiters.first, first.count <= s.available {
                s.waiters.removeFirst()
                s.take(first.count, of: permits)
                ready.append(first.continuation)
            }
            return ready
        }
        for c in ready { c.resume() }
    }
}
