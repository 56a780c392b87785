#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A pthread mutex with a stable address (a class, so it is never moved or copied).
/// Not recursive: code holding it must not call back into anything that takes it again.
// @unchecked: owns a C pthread_mutex_t, which must stay at one address (ClientConnection holds it
// across libmosquitto calls and their callbacks).
final class PThreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a `Synchronization.Mutex`, as a class so that closures can share it.
final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) { mutex = Mutex(value) }

    func withLock<T, E: Error>(_ body: (inout sending Value) throws(E) -> sending T) throws(E) -> sending T {
        try mutex.withLock(body)
    }

    var snapshot: Value { withLock { $0 } }
}

/// Seconds on the monotonic clock (never jumps with wall-clock changes).
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1_000_000_000
}

/// The text of an errno value.
func errnoDescription(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}
