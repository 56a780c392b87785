/// A small, fixed set of threads that drives any number of `MQTTClient`s (DESIGN.md "Scale": one
/// MQTT connection per device, never a thread per device).
///
/// Threading model:
/// - Each loop thread owns an epoll set and an eventfd. A client is pinned to one thread (round
///   robin) for its whole life; that thread alone calls `mosquitto_loop_read`, `_loop_write`,
///   `_loop_misc`, `mosquitto_connect_async` and `mosquitto_disconnect` for it, and alone
///   registers its socket (`mosquitto_socket`, with EPOLLOUT only while `mosquitto_want_write`).
/// - Any thread may publish or subscribe. The call takes the client's mutex (every libmosquitto
///   call on a handle happens under that mutex, so the handle is never used by two threads at once)
///   and libmosquitto writes the packet to the socket straight away on the caller's thread. Only
///   if bytes are left over (socket buffer full, connection still opening) is the loop thread woken
///   through its eventfd to flush them, so a publish never waits for a loop iteration.
/// - libmosquitto's C callbacks run inside those calls, with the mutex held. They only record
///   what happened (a copied message, a state change); the handlers you installed run after the
///   mutex is released, on the thread that made the call: the loop thread for inbound messages and
///   state changes. Handlers must be short and must not block; hand work to an actor or queue.
/// - Timers (reconnect backoff, waits' timeouts, connect timeout, keepalive checks via
///   `mosquitto_loop_misc`) live on the loop thread, in one heap per thread; epoll_wait's timeout is
///   the next deadline. No pass over every client.
public final class MQTTEventLoop: Sendable {
    let workers: [EventLoopWorker]
    private let nextWorker = Locked(0)

    /// The number of threads this loop runs.
    public var threadCount: Int { workers.count }

    /// Starts `threads` loop threads (at least one), named "<name>-<i>".
    public init(threads: Int = 1, name: String = "mqtt-loop") throws(MQTTError) {
        guard MosquittoLibrary.ensureInitialized() else {
            throw .library("mosquitto_lib_init failed")
        }
        var created: [EventLoopWorker] = []
        for index in 0..<max(1, threads) {
            do {
                created.append(try EventLoopWorker(name: "\(name)-\(index)"))
            } catch {
                for worker in created { worker.stop(wait: true) }
                throw error
            }
        }
        workers = created
    }

    /// A process-wide loop with two threads, created on first use. Fleet code that wants to size
    /// its own threads creates its own `MQTTEventLoop` instead.
    public static func shared() throws(MQTTError) -> MQTTEventLoop {
        try sharedLoop.withLock { (loop: inout MQTTEventLoop?) throws(MQTTError) -> MQTTEventLoop in
            if let loop { return loop }
            let created = try MQTTEventLoop(threads: 2, name: "mqtt-shared")
            loop = created
            return created
        }
    }

    private static let sharedLoop = Locked<MQTTEventLoop?>(nil)

    /// The worker the next client is pinned to.
    func assignWorker() -> EventLoopWorker {
        let index = nextWorker.withLock { (next: inout Int) -> Int in
            let chosen = next % workers.count
            next &+= 1
            return chosen
        }
        return workers[index]
    }

    /// The number of clients currently attached, over all threads.
    public var clientCount: Int { workers.reduce(0) { $0 + $1.attachedCount } }

    /// Stops the threads and waits for them. Clients still attached are closed abruptly.
    /// Do not call from a handler (it runs on a loop thread).
    public func shutdown() {
        for worker in workers { worker.stop(wait: true) }
    }

    deinit {
        for worker in workers { worker.stop(wait: false) }
    }
}
