import Foundation

/// Runs blocking or CPU-heavy work (a child process to its end, a GStreamer pull with a timeout, a
/// condition wait, a simulation) on a thread of its own and awaits it. Swift's cooperative pool has
/// as many threads as cores (two here): a test that blocks one of them stalls every other test's
/// async work in a parallel `swift test`; two such tests at once stall them all (seen: 10-17 s
/// pauses, devices that could not finish connecting).
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}

/// The same for work that cannot throw.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}
