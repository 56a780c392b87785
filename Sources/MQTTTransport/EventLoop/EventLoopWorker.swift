import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// One loop thread: an epoll set over the sockets of the clients pinned to it, an eventfd to wake
/// it, a command queue, and the clients' timers. See `MQTTEventLoop` for the threading model.
///
/// Fields marked "loop thread only" are touched by the loop thread alone (commands posted from
/// other threads run there), so they need no lock.
final class EventLoopWorker: @unchecked Sendable {
    let name: String
    private let epollFD: Int32
    private let wakeFD: Int32
    private let commands = Locked<[@Sendable () -> Void]>([])
    private let lifecycle = Locked<Lifecycle>(.running)
    private let attached = Locked<Int>(0)
    private let thread = Locked<pthread_t?>(nil)

    private enum Lifecycle { case running, stopping, stopped }

    // Loop thread only.
    private var connectionsByFD: [Int32: ClientConnection] = [:]
    private var clients: [ObjectIdentifier: ClientConnection] = [:]
    /// Clients' timers (reconnect backoff, waits' timeouts, CONNACK timeouts, keepalive checks),
    /// earliest first. Entries go stale when a client's deadline changes; a popped entry counts only
    /// if it still matches (`DeadlineHeap`). There is no pass over every client: each client's
    /// timers are here (ClientConnection+SocketTimer.swift).
    private var deadlines = DeadlineHeap()

    /// The longest epoll_wait without a deadline (seconds).
    private static let idleWait = 1.0

    init(name: String) throws(MQTTError) {
        self.name = name
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .eventLoop("epoll_create1: \(errnoDescription(errno))") }
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wake >= 0 else {
            close(epoll)
            throw .eventLoop("eventfd: \(errnoDescription(errno))")
        }
        epollFD = epoll
        wakeFD = wake
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wake
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event) == 0 else {
            close(epoll)
            close(wake)
            throw .eventLoop("epoll_ctl(eventfd): \(errnoDescription(errno))")
        }
        var created = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&created, nil, eventLoopThreadMain, context)
        guard rc == 0 else {
            Unmanaged<EventLoopWorker>.fromOpaque(context).release()
            close(epoll)
            close(wake)
            throw .eventLoop("pthread_create: \(errnoDescription(rc))")
        }
        thread.withLock { $0 = created }
    }

    deinit {
        close(epollFD)
        close(wakeFD)
    }

    var attachedCount: Int { attached.snapshot }

    // MARK: Any thread

    /// Runs `command` on the loop thread soon. Returns false if the loop has stopped.
    @discardableResult
    func post(_ command: @escaping @Sendable () -> Void) -> Bool {
        guard lifecycle.snapshot == .running else { return false }
        commands.withLock { $0.append(command) }
        wake()
        return true
    }

    /// `post` without waking the thread: `command` runs at the loop's next turn, within `idleWait`
    /// at the latest (for a deadline set off the loop thread, e.g. a goodbye's, where a wake-up per
    /// client would cost more than the second it may wait).
    @discardableResult
    func postLazily(_ command: @escaping @Sendable () -> Void) -> Bool {
        guard lifecycle.snapshot == .running else { return false }
        commands.withLock { $0.append(command) }
        return true
    }

    private func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    /// Asks the thread to stop; with `wait`, joins it (from any thread but this loop's own).
    func stop(wait: Bool) {
        let shouldSignal = lifecycle.withLock { (state: inout Lifecycle) -> Bool in
            guard state == .running else { return false }
            state = .stopping
            return true
        }
        if shouldSignal { wake() }
        let taken = thread.withLock { (current: inout pthread_t?) -> pthread_t? in
            defer { current = nil }
            return current
        }
        guard let taken else { return }
        if wait && !pthread_equal(taken, pthread_self()).isTrue {
            pthread_join(taken, nil)
        } else {
            pthread_detach(taken)  // not waiting, or called from a handler on this very thread
        }
    }

    // MARK: Loop thread only

    func run() {
        let threadName = String(name.utf8.prefix(15)) ?? "mqtt-loop"
        _ = ipcemu_name_current_thread(threadName)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while lifecycle.snapshot == .running {
            let ready = epoll_wait(epollFD, &events, Int32(events.count), nextTimeoutMilliseconds())
            if ready < 0 && errno != EINTR {
                usleep(10_000)  // should not happen; never spin
            }
            if ready > 0 {
                for index in 0..<Int(ready) {
                    let fd = events[index].data.fd
                    let flags = events[index].events
                    if fd == wakeFD {
                        var value: UInt64 = 0
                        _ = withUnsafeMutableBytes(of: &value) { read(wakeFD, $0.baseAddress, 8) }
                    } else if let connection = connectionsByFD[fd] {
                        connection.handleIO(events: flags)
                    }
                }
            }
            runCommands()
            runDueTimers()
        }
        runCommands()
        for connection in clients.values { connection.closeOnLoop() }
        clients.removeAll()
        connectionsByFD.removeAll()
        deadlines.removeAll()
        lifecycle.withLock { $0 = .stopped }
    }

    private func runCommands() {
        let pending = commands.withLock { (queue: inout [@Sendable () -> Void]) in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for command in pending { command() }
    }

    private func nextTimeoutMilliseconds() -> Int32 {
        let now = monotonicSeconds()
        var next = now + Self.idleWait
        if let earliest = deadlines.earliest, earliest < next { next = earliest }
        let milliseconds = (next - now) * 1000
        if milliseconds <= 0 { return 0 }
        return Int32(min(1000, milliseconds.rounded(.up)))
    }

    /// Fires the timers that are due: O(log n) per timer, never a scan of every client.
    private func runDueTimers() {
        let now = monotonicSeconds()
        while let entry = deadlines.popDue(now: now) {
            guard let connection = clients[entry.id], connection.scheduledDeadline == entry.deadline else {
                continue  // stale: re-armed, cancelled or detached since
            }
            connection.scheduledDeadline = nil
            connection.timerFired()
        }
    }

    func attach(_ connection: ClientConnection) {
        clients[ObjectIdentifier(connection)] = connection
        attached.withLock { $0 = clients.count }
    }

    func detach(_ connection: ClientConnection) {
        let id = ObjectIdentifier(connection)
        clients[id] = nil
        connection.scheduledDeadline = nil
        if connection.registeredFD >= 0, connectionsByFD[connection.registeredFD] === connection {
            connectionsByFD[connection.registeredFD] = nil
        }
        connection.registeredFD = -1
        attached.withLock { $0 = clients.count }
    }

    /// Brings the epoll registration and timer set in line with the client's socket, after any
    /// libmosquitto call on the loop thread. Called with the client's mutex held.
    ///
    /// libmosquitto closes its socket itself (on errors, DISCONNECT, destroy); a closed descriptor
    /// leaves the epoll set by itself and its number may be reused at once, so a registration whose
    /// socket was closed (`socketClosed`, set by the disconnect callback) is forgotten, never
    /// deleted by number.
    func synchronize(_ connection: ClientConnection, handle: OpaquePointer?, socketClosed: Bool) {
        let next = connection.nextDeadline
        if next != connection.scheduledDeadline {
            connection.scheduledDeadline = next
            if let deadline = next {
                deadlines.push(deadline, id: ObjectIdentifier(connection))
            }
        }

        if socketClosed || handle == nil {
            forgetRegistration(of: connection)
        }
        guard let handle else { return }
        let fd = mosquitto_socket(handle)
        guard fd >= 0 else {
            unregister(connection)
            return
        }
        var wanted = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        if mosquitto_want_write(handle) { wanted |= EPOLLOUT.rawValue }
        if connection.registeredFD == fd {
            guard connection.registeredEvents != wanted else { return }
            var event = epoll_event()
            event.events = wanted
            event.data.fd = fd
            if epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) == 0 {
                connection.registeredEvents = wanted
                return
            }
            forgetRegistration(of: connection)  // ENOENT: the old socket was closed under us
        } else if connection.registeredFD >= 0 {
            unregister(connection)
        }
        var event = epoll_event()
        event.events = wanted
        event.data.fd = fd
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 && errno == EEXIST {
            _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
        }
        connection.registeredFD = fd
        connection.registeredEvents = wanted
        connectionsByFD[fd] = connection
    }

    /// Removes a registration whose socket is still open.
    private func unregister(_ connection: ClientConnection) {
        guard connection.registeredFD >= 0 else { return }
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.registeredFD, &event)
        forgetRegistration(of: connection)
    }

    private func forgetRegistration(of connection: ClientConnection) {
        let fd = connection.registeredFD
        if fd >= 0, connectionsByFD[fd] === connection { connectionsByFD[fd] = nil }
        connection.registeredFD = -1
        connection.registeredEvents = 0
    }
}

extension Int32 {
    fileprivate var isTrue: Bool { self != 0 }
}

/// The loop thread's entry point: a file-scope function, as C requires (DESIGN.md interop rules).
/// The worker was retained for the thread by `pthread_create`'s caller.
private func eventLoopThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let worker = Unmanaged<EventLoopWorker>.fromOpaque(context).takeRetainedValue()
    worker.run()
    return nil
}
