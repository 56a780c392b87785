import Foundation

/// Runs CPU-heavy simulation work on a thread of its own and awaits it. A test that computed on
/// one of Swift's cooperative threads (two on a 2-core machine), or blocked one waiting for its
/// shards' threads, would stall every other test's async work in a parallel `swift test` (devices
/// that cannot finish connecting within their 5 s). Results come back to the test, which checks
/// them on its own task.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}
