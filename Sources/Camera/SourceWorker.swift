import Foundation
import Synchronization

/// The thread a frame source runs on: started once, stopped once, `stop` waits for the loop to
/// return (unless called from the loop itself, through the sink).
final class SourceWorker: Sendable {
    private enum State { case idle, running, stopping, stopped }
    private let state = Mutex(State.idle)
    private let finished = DispatchSemaphore(value: 0)
    private let threadName: String
    private let threadID = Mutex<pthread_t?>(nil)

    init(name: String) { self.threadName = name }

    /// True once `stop` was called; the loop checks it between frames.
    var shouldStop: Bool {
        state.withLock { $0 != .running }
    }

    /// Runs `loop` on a new thread. The loop must return soon after `shouldStop` turns true.
    func start(_ loop: @escaping @Sendable () -> Void) throws(CameraError) {
        let ok = state.withLock { s -> Bool in
            guard s == .idle else { return false }
            s = .running
            return true
        }
        guard ok else { throw .alreadyStarted }
        let thread = Thread { [self] in
            threadID.withLock { $0 = pthread_self() }
            loop()
            finished.signal()
        }
        thread.name = threadName
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Asks the loop to end and waits for it. Returns false when it had already been stopped or
    /// never started (so the caller sends `.stopped` once).
    @discardableResult
    func stop() -> Bool {
        let wasRunning = state.withLock { s -> Bool in
            guard s == .running else {
                if s == .idle { s = .stopped }
                return false
            }
            s = .stopping
            return true
        }
        guard wasRunning else { return false }
        let onLoopThread = threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !onLoopThread { finished.wait() }
        state.withLock { $0 = .stopped }
        return true
    }
}
