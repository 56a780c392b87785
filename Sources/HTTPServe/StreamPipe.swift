import CHTTPServe
import Synchronization

/// A streamed body between its producer (a Swift task) and the connection's thread that sends it:
/// one chunk at a time. The producer's `write` waits until the thread took its chunk; the thread's
/// `read` blocks (that connection's thread, not a cooperative one) until there is a chunk, the end,
/// or the client hangs up, which cancels the producer.
final class StreamPipe: Sendable {
    private struct State {
        var chunk: [UInt8] = []
        var offset = 0
        var ended = false
        var failed = false
        var cancelled = false
        var producer: CheckedContinuation<Void, any Error>?
        var task: Task<Void, Never>?
    }

    private let state = Mutex(State())
    /// Raised when a chunk, the end or a cancellation is there for the thread.
    private let signal: Int32
    /// The connection's socket: waited on for a hang-up, never read or written here.
    private let socket: Int32
    /// The server's set of streams, which this one leaves when it is freed.
    let streams: StreamSet

    init?(socket: Int32, streams: StreamSet) {
        let signal = chs_signal_open()
        guard signal >= 0 else { return nil }
        self.signal = signal
        self.socket = socket
        self.streams = streams
    }

    deinit { chs_signal_close(signal) }

    /// Starts the producer's task.
    func start(_ produce: @escaping @Sendable (HTTPServeStreamWriter) async throws -> Void) {
        let writer = HTTPServeStreamWriter(pipe: self)
        let task = Task {
            do {
                try await produce(writer)
                self.end(failed: false)
            } catch {
                self.end(failed: true)
            }
        }
        let cancelled = state.withLock { s in
            s.task = task
            return s.cancelled
        }
        if cancelled { task.cancel() }
    }

    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let refused = state.withLock { s -> Bool in
                    if s.cancelled || s.ended { return true }
                    s.chunk = bytes
                    s.offset = 0
                    s.producer = c
                    return false
                }
                if refused { c.resume(throwing: CancellationError()) } else { chs_signal_raise(signal) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    private func end(failed: Bool) {
        state.withLock { s in
            s.ended = true
            if failed { s.failed = true }
        }
        chs_signal_raise(signal)
    }

    /// The client is gone or the server stops: the producer's task is cancelled and its pending
    /// `write` throws. Idempotent.
    func cancel() {
        let (producer, task) = state.withLock { s in
            s.cancelled = true
            defer { s.producer = nil; s.task = nil }
            return (s.producer, s.task)
        }
        producer?.resume(throwing: CancellationError())
        task?.cancel()
        chs_signal_raise(signal)
    }

    private enum Step {
        case bytes(Int, CheckedContinuation<Void, any Error>?)
        case end, error, wait
    }

    /// On the connection's thread: the next bytes (at most `max`), CHS_STREAM_END or CHS_STREAM_ERROR.
    func read(into buffer: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        guard max > 0 else { return Int(CHS_STREAM_ERROR) }
        while true {
            let step = state.withLock { s -> Step in
                if s.cancelled || s.failed { return .error }
                let left = s.chunk.count - s.offset
                if left > 0 {
                    let n = min(max, left)
                    s.chunk.withUnsafeBufferPointer { chunk in
                        if let base = chunk.baseAddress { buffer.update(from: base + s.offset, count: n) }
                    }
                    s.offset += n
                    guard s.offset == s.chunk.count else { return .bytes(n, nil) }
                    s.chunk = []
                    s.offset = 0
                    defer { s.producer = nil }
                    return .bytes(n, s.producer)
                }
                return s.ended ? .end : .wait
            }
            switch step {
            case .bytes(let n, let producer):
                producer?.resume()
                return n
            case .end:
                return Int(CHS_STREAM_END)
            case .error:
                return Int(CHS_STREAM_ERROR)
            case .wait:
                // The peer closing its side counts: an event stream's client that went away frees
                // its producer now, not at the next keepalive.
                let woke = chs_signal_wait(signal, socket, 1, -1)
                if woke & Int32(CHS_WAIT_HUNG_UP) != 0 {
                    cancel()
                    return Int(CHS_STREAM_ERROR)
                }
            }
        }
    }
}

/// The streams being sent, so that stopping can wait for the ones that are ending.
final class StreamSet: Sendable {
    private let pipes = Mutex<[ObjectIdentifier: StreamPipe]>([:])

    func add(_ pipe: StreamPipe) { pipes.withLock { $0[ObjectIdentifier(pipe)] = pipe } }
    func remove(_ pipe: StreamPipe) { _ = pipes.withLock { $0.removeValue(forKey: ObjectIdentifier(pipe)) } }
    var count: Int { pipes.withLock { $0.count } }

    /// Returns once every stream is gone, or `timeout` passed.
    func waitUntilEmpty(timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while count > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func cancelAll() {
        for pipe in pipes.withLock({ Array($0.values) }) { pipe.cancel() }
    }
}
