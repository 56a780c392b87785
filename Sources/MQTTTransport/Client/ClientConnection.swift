import CMosquitto
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The engine behind one `MQTTClient`: a libmosquitto handle, its mutex, its state, and what the
/// loop thread does for it. `MQTTClient` is the public face; see `MQTTEventLoop` for threading.
///
/// Every libmosquitto call on `handle` happens with `mutex` held (`locked` / `loopLocked`). Where the
/// connection is and whether the client wants one is `lifecycle` (ConnectionLifecycle.swift).
/// Waits (acknowledgements, connection, disconnect) are in ClientConnection+Waiting.swift.
///
/// Memory (docs/fleet.md "Memory per device"): a fleet holds thousands of these, so the options
/// all its clients share are one `ClientSettings` and only the identity is per client; the mutex
/// is inline; the waiter table exists only while something waits.
// @unchecked: wraps a libmosquitto handle (OpaquePointer); its state is guarded by `mutex` by hand.
final class ClientConnection: @unchecked Sendable {
    /// The options every client of the same broker and configuration shares.
    let settings: ClientSettings
    /// Its client id, credentials and will topic.
    let identity: ClientIdentity
    let worker: EventLoopWorker
    let mutex = Mutex<Void>(())

    // Guarded by `mutex`.
    private var handle: OpaquePointer?
    var lifecycle = ConnectionLifecycle.idle
    private(set) var state: MQTTConnectionState = .disconnected(reason: "not connected yet")
    private var subscriptions = SubscriptionList()
    private var counters = MQTTClientCounters()
    private var socketClosed = false
    private var flushPending = false
    /// Connects in a row that found a Unix socket's accept backlog full (`busyRetryDelay`); beside
    /// the two flags, in their padding.
    private var busyRetries: UInt8 = 0
    var outbox: [Pending] = []
    private var messageHandler: (@Sendable (MQTTMessage) -> Void)?
    private var stateHandler: (@Sendable (MQTTConnectionState) -> Void)?
    /// Where messages and states go instead of the handlers (`MQTTClient.makeInbox`).
    private var inbox: MQTTInbox?
    /// Who waits for what; nil while nothing does.
    var waiters: WaiterTable?
    /// The earliest deadline of a waiter, or later (a resumed waiter's deadline is dropped when it
    /// comes: `expireWaiters`).
    var waitDeadline: Double?
    private var closeActions: [@Sendable () -> Void] = []
    /// Published at the SUBACK of the subscriptions restored after each CONNACK (`setPresence`).
    private var presence: MQTTPresence?
    /// The restored SUBSCRIBE whose SUBACK makes the presence due (0: none awaited).
    private var presenceMid: Int32 = 0
    /// The presence went out on the current connection.
    private var presencePublished = false
    /// The last publish before a clean disconnect (`publishThenDisconnect`): its mid, 0 when no
    /// PUBACK is awaited for it. Its PUBACK sends DISCONNECT from the loop thread.
    var goodbyeMid: Int32 = 0
    /// Past this (monotonic seconds), DISCONNECT goes without that PUBACK.
    var goodbyeDeadline: Double?
    /// DISCONNECT is due: sent by `loopLocked` once its body (the read) is done.
    var goodbyeDue = false

    // Loop thread only (callbacks that touch them run on the loop thread too).
    var registeredFD: Int32 = -1
    var registeredEvents: UInt32 = 0
    /// When the next connection attempt is due (reconnect back-off; with the mutex held).
    var timerDeadline: Double?
    /// The deadline the worker's heap holds for this client (loop thread only).
    var scheduledDeadline: Double?

    /// The client's next deadline: a connection attempt, a waiter's timeout, a goodbye's PUBACK
    /// timeout, or the open socket's CONNACK timeout or keepalive check (mutex held).
    var nextDeadline: Double? {
        Self.earlier(Self.earlier(waitDeadline, timerDeadline), Self.earlier(goodbyeDeadline, lifecycle.socketDeadline))
    }

    private static func earlier(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// Its options, put back together (`MQTTClient.options`).
    var options: MQTTClientOptions { MQTTClientOptions(settings: settings, identity: identity) }

    enum Pending {
        case message(MQTTMessage)
        case state(MQTTConnectionState)
        case resume(WaitContinuation, Result<Void, MQTTError>)
        case closed(@Sendable () -> Void)
    }

    init(options: MQTTClientOptions, worker: EventLoopWorker) throws(MQTTError) {
        let (common, identity) = options.split()
        self.settings = ClientSettings.shared(for: common)
        self.identity = identity
        self.worker = worker
        guard MosquittoLibrary.ensureInitialized() else {
            throw .library("mosquitto_lib_init failed")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let id: String? = identity.clientID.isEmpty ? nil : identity.clientID
        guard let created = mosquitto_new(id, settings.options.cleanSession, context) else {
            throw .library("mosquitto_new failed: \(errnoDescription(errno))")
        }
        // One descriptor per client instead of three (MosquittoSocketpair, DescriptorBudget).
        MosquittoSocketpair.release(created)
        do {
            try MosquittoSetup.configure(created, options: options)
        } catch {
            mosquitto_destroy(created)
            throw error
        }
        handle = created
        worker.post { [self] in self.worker.attach(self) }
    }

    // MARK: Locking and delivery

    /// Runs `body` with the mutex held, then (unlocked) delivers what the callbacks recorded and,
    /// if libmosquitto still has bytes to write, asks the loop thread to flush them.
    func locked<T: Sendable, E: Error>(_ body: (OpaquePointer?) throws(E) -> T) throws(E) -> T {
        let (result, delivery, flush) = mutex.withLock { _ -> (Result<T, E>, Delivery, Bool) in
            let result: Result<T, E>
            do throws(E) {
                result = .success(try body(handle))
            } catch {
                result = .failure(error)
            }
            var flush = false
            if let handle, !flushPending, mosquitto_socket(handle) >= 0, mosquitto_want_write(handle) {
                flushPending = true
                flush = true
            }
            return (result, takeOutbox(), flush)
        }
        deliver(delivery)
        if flush { worker.post { [self] in self.flushOnLoop() } }
        return try result.get()
    }

    /// `locked` for the loop thread: afterwards a due goodbye sends DISCONNECT
    /// (`publishThenDisconnect`) and the worker re-syncs epoll and timers.
    func loopLocked(_ body: (OpaquePointer) -> Void) {
        let delivery = mutex.withLock { _ -> Delivery in
            if let handle {
                body(handle)
                if goodbyeDue, self.handle != nil {
                    goodbyeDue = false
                    disconnectLocked(handle)
                }
            }
            worker.synchronize(self, handle: handle, socketClosed: socketClosed)
            socketClosed = false
            return takeOutbox()
        }
        deliver(delivery)
    }

    /// What the callbacks recorded, and where it goes, taken with the mutex held.
    private struct Delivery {
        var pending: [Pending] = []
        var onMessage: (@Sendable (MQTTMessage) -> Void)?
        var onState: (@Sendable (MQTTConnectionState) -> Void)?
        var inbox: MQTTInbox?
    }

    private func takeOutbox() -> Delivery {
        guard !outbox.isEmpty else { return Delivery() }
        let taken = outbox
        // Not keepingCapacity: `taken` shares the buffer, so keeping it would copy it, and an idle
        // client (thousands in a fleet) would hold a buffer of its largest burst (docs/fleet.md
        // "Memory per device").
        outbox = []
        return Delivery(pending: taken, onMessage: messageHandler, onState: stateHandler, inbox: inbox)
    }

    private func deliver(_ delivery: Delivery) {
        var dropped = 0
        for item in delivery.pending {
            switch item {
            case .message(let message):
                if let inbox = delivery.inbox {
                    if inbox.push(.message(message)) == .dropped { dropped += 1 }
                } else {
                    delivery.onMessage?(message)
                }
            case .state(let state):
                if let inbox = delivery.inbox {
                    // An inbox's owner waits for connected or disconnected: a `.connecting` would
                    // only start a drain that does nothing (one per reconnect).
                    if state == .connecting { continue }
                    if inbox.push(.state(state)) == .dropped { dropped += 1 }
                } else {
                    delivery.onState?(state)
                }
            case .resume(let continuation, let result): continuation.resume(returning: result)
            case .closed(let action): action()
            }
        }
        if dropped > 0 { mutex.withLock { _ in counters.droppedInbound += dropped } }
    }

    /// With the mutex held. `deliver` false: the owner is told later (`presenceDue`).
    private func setState(_ new: MQTTConnectionState, deliver: Bool = true) {
        guard new != state else { return }
        state = new
        if deliver { outbox.append(.state(new)) }
        if new == .connected {
            for token in waiters?.takeConnected() ?? [] { resume(token, .success(())) }
            releaseWaitersIfEmpty()
        }
    }

    // MARK: Public operations (any thread)

    var currentState: MQTTConnectionState { mutex.withLock { _ in state } }
    var currentCounters: MQTTClientCounters { mutex.withLock { _ in counters } }
    var currentSubscriptions: [String] { mutex.withLock { _ in subscriptions.entries.map(\.filter) } }

    func setMessageHandler(_ handler: (@Sendable (MQTTMessage) -> Void)?) {
        mutex.withLock { _ in messageHandler = handler }
    }

    func countInboundDrop() {
        mutex.withLock { _ in counters.droppedInbound += 1 }
    }

    func setStateHandler(_ handler: (@Sendable (MQTTConnectionState) -> Void)?) {
        mutex.withLock { _ in stateHandler = handler }
    }

    /// Messages and states go to `inbox` from now on, instead of the handlers; a closed client
    /// finishes it at once.
    func setInbox(_ inbox: MQTTInbox) {
        let closed = mutex.withLock { _ -> Bool in
            self.inbox = inbox
            return handle == nil
        }
        if closed { inbox.finish() }
    }

    /// From now on the presence is published at each connection's SUBACK, and the owner is told
    /// `.connected` only then (MQTTPresence).
    func setPresence(_ presence: MQTTPresence) {
        mutex.withLock { _ in self.presence = presence }
    }

    /// No presence from now on; true when it went out on the current connection (its owner then
    /// has it to take back, e.g. with an offline status).
    func clearPresence() -> Bool {
        mutex.withLock { _ in
            presence = nil
            return presencePublished
        }
    }

    /// Runs `action` once the client is closed (at once if it already is).
    func onClose(_ action: @escaping @Sendable () -> Void) {
        let closed = mutex.withLock { _ -> Bool in
            if handle == nil { return true }
            closeActions.append(action)
            return false
        }
        if closed { action() }
    }

    func connect() {
        let start = mutex.withLock { _ -> Bool in
            guard handle != nil else { return false }
            return lifecycle.want()
        }
        if start { worker.post { [self] in self.startAttempt() } }
    }

    /// Hands a message to libmosquitto; returns its message id.
    @discardableResult
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError) -> Int32 {
        try locked { (mosq) throws(MQTTError) -> Int32 in
            try publishLocked(mosq, topic: topic, payload: payload, qos: qos, retain: retain)
        }
    }

    func publishLocked(
        _ mosq: OpaquePointer?, topic: String, payload: [UInt8], qos: Int, retain: Bool
    ) throws(MQTTError) -> Int32 {
        guard let mosq else { throw .closed }
        guard (0...2).contains(qos) else { throw .publishFailed("QoS \(qos) is not 0, 1 or 2") }
        guard mosquitto_pub_topic_check(topic) == mosqSuccess else { throw .invalidTopic(topic) }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish(mosq, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain)
        }
        let connectionTrouble = rc == mosqNoConnection || rc == mosqConnectionLost || rc == mosqErrno
        if rc != mosqSuccess {
            // QoS 1/2 stays in libmosquitto's queue and goes out after the next CONNACK.
            guard connectionTrouble, qos > 0 else {
                let text = rc == mosqNoConnection
                    ? "not connected (QoS 0 is not queued)" : MosquittoLibrary.describe(rc)
                throw .publishFailed("\(text): \(topic)")
            }
        }
        counters.messagesOut += 1
        return mid
    }

    func subscribe(_ filter: String, qos: Int) throws(MQTTError) {
        try locked { (mosq) throws(MQTTError) in try subscribeLocked(mosq, filter: filter, qos: qos) }
    }

    /// `joiningUnanswered`: when the same filter at the same QoS has a SUBSCRIBE in flight, send
    /// none (its SUBACK will answer).
    func subscribeLocked(
        _ mosq: OpaquePointer?, filter: String, qos: Int, joiningUnanswered: Bool = false
    ) throws(MQTTError) {
        guard let mosq else { throw .closed }
        guard (0...2).contains(qos) else { throw .subscribeFailed("QoS \(qos) is not 0, 1 or 2") }
        guard mosquitto_sub_topic_check(filter) == mosqSuccess else { throw .invalidTopic(filter) }
        if joiningUnanswered, subscriptions.qos(of: filter) == Int32(qos), state == .connected,
            waiters?.subscribeMids.values.contains(filter) == true
        {
            return
        }
        subscriptions.set(filter, qos: Int32(qos))
        // Not connected: remembered, and sent with the others after the next CONNACK.
        guard state == .connected else { return }
        var mid: Int32 = 0
        let rc = mosquitto_subscribe(mosq, &mid, filter, Int32(qos))
        if rc == mosqSuccess {
            waiterTable().subscribeMids[mid] = filter
        } else if rc != mosqNoConnection {
            throw .subscribeFailed("\(MosquittoLibrary.describe(rc)): \(filter)")
        }
    }

    func unsubscribe(_ filter: String) throws(MQTTError) {
        try locked { (mosq) throws(MQTTError) in
            guard let mosq else { throw .closed }
            subscriptions.remove(filter)
            guard state == .connected else { return }
            let rc = mosquitto_unsubscribe(mosq, nil, filter)
            if rc != mosqSuccess && rc != mosqNoConnection {
                throw .subscribeFailed("unsubscribe \(filter): \(MosquittoLibrary.describe(rc))")
            }
        }
    }

    func disconnect() {
        mutex.withLock { _ in lifecycle.unwant() }
        worker.post { [self] in self.disconnectOnLoop() }
    }

    func disconnectAbruptly(reconnect: Bool) {
        if !reconnect { mutex.withLock { _ in lifecycle.unwant() } }
        worker.post { [self] in self.dropOnLoop() }
    }

    func close() {
        let posted = worker.post { [self] in
            self.closeOnLoop()
            self.worker.detach(self)
        }
        if !posted {  // the loop is gone: nothing else can be using the handle
            let (actions, finishing) = mutex.withLock { _ -> ([@Sendable () -> Void], MQTTInbox?) in
                if let handle { mosquitto_destroy(handle) }
                handle = nil
                defer { closeActions.removeAll() }
                return (closeActions, self.inbox)
            }
            finishing?.finish()
            for action in actions { action() }
        }
    }

    // MARK: Loop thread

    func startAttempt() {
        loopLocked { mosq in
            guard case .reconnectWait(let failures) = lifecycle, mosquitto_socket(mosq) < 0 else { return }
            timerDeadline = nil
            counters.connectAttempts += 1
            setState(.connecting)
            errno = 0
            let rc = mosquitto_connect_bind_async(
                mosq, settings.options.host, Int32(clamping: settings.options.port),
                Int32(clamping: settings.options.keepAlive), settings.options.bindAddress)
            let systemError = errno
            guard rc == mosqSuccess else {
                // A Unix socket's full backlog: the same attempt again in a few milliseconds.
                if settings.options.usesUnixSocket, systemError == EAGAIN || systemError == EWOULDBLOCK,
                   let delay = Self.busyRetryDelay(after: Int(busyRetries)) {
                    busyRetries += 1
                    lifecycle = .reconnectWait(failures: failures)
                    timerDeadline = monotonicSeconds() + delay
                    return
                }
                busyRetries = 0
                setState(.disconnected(reason: settings.options.failureReason(rc, systemError, wasConnected: false)))
                scheduleRetry(after: failures)
                return
            }
            busyRetries = 0
            let timeout = monotonicSeconds() + settings.options.connectTimeout
            lifecycle = .connecting(ConnectionAttempt(deadline: timeout, failures: failures))
            let fd = mosquitto_socket(mosq)
            if fd >= 0, !settings.options.usesUnixSocket {
                // Give up on an unanswered SYN after ~7 s rather than Linux's ~2 minutes.
                var synRetries: Int32 = 2
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_SYNCNT, &synRetries, socklen_t(MemoryLayout<Int32>.size))
            }
        }
    }

    func handleIO(events: UInt32) {
        loopLocked { mosq in
            let failed = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
            if events & EPOLLOUT.rawValue != 0 || failed,
                mosquitto_socket(mosq) >= 0, mosquitto_want_write(mosq)
            {
                _ = mosquitto_loop_write(mosq, 1)
            }
            if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 || failed, mosquitto_socket(mosq) >= 0 {
                readAvailable(mosq)
                // What the callbacks queued (a SUBSCRIBE at the CONNACK, the presence at the
                // SUBACK, PUBACKs) goes now rather than at the next EPOLLOUT: no epoll_ctl pair
                // and no loop turn per packet, and the packets carry the ACK of what was read.
                if mosquitto_socket(mosq) >= 0, mosquitto_want_write(mosq) { _ = mosquitto_loop_write(mosq, 1) }
            }
        }
    }

    /// Reads until the socket would block (libmosquitto reads a bounded number of packets per call).
    func readAvailable(_ mosq: OpaquePointer) {
        for _ in 0..<16 {
            errno = 0
            let rc = mosquitto_loop_read(mosq, 1)
            let systemError = errno
            if rc != mosqSuccess || mosquitto_socket(mosq) < 0 || systemError == EAGAIN
                || systemError == EWOULDBLOCK
            {
                return
            }
        }
    }

    func flushOnLoop() {
        loopLocked { mosq in
            flushPending = false
            if mosquitto_socket(mosq) >= 0, mosquitto_want_write(mosq) {
                _ = mosquitto_loop_write(mosq, 1)
            }
        }
    }

    /// The client's deadline came: waiters past theirs time out, the open socket's CONNACK timeout
    /// or keepalive check runs, and a due retry starts.
    func timerFired() {
        let now = monotonicSeconds()
        var retry = false
        loopLocked { mosq in
            expireWaiters(now: now)
            if let deadline = goodbyeDeadline, deadline <= now { goodbyeIsDue() }
            if let deadline = lifecycle.socketDeadline, deadline <= now { socketTimerFired(mosq, now: now) }
            guard let deadline = timerDeadline, deadline <= now else { return }
            timerDeadline = nil
            if case .reconnectWait = lifecycle { retry = true }
        }
        if retry { startAttempt() }
    }

    /// `disconnect()` already left the connected phases (`stopping` or `idle`); if `connect()` came
    /// since, the current connection is still closed cleanly and the client then reconnects.
    func disconnectOnLoop() {
        loopLocked { mosq in disconnectLocked(mosq) }
    }

    /// `disconnectOnLoop` with the mutex held, on the loop thread.
    func disconnectLocked(_ mosq: OpaquePointer) {
        timerDeadline = nil
        busyRetries = 0
        if case .reconnectWait = lifecycle { lifecycle = .reconnectWait(failures: 0) }
        lifecycle.updateAttempt { $0.failures = 0 }
        guard mosquitto_socket(mosq) >= 0 else {
            if !lifecycle.wantsConnection { setState(.disconnected(reason: "disconnected by the client")) }
            for token in waiters?.takeClosed() ?? [] { resume(token, .success(())) }
            releaseWaitersIfEmpty()
            return
        }
        // Sends DISCONNECT (the broker discards the will); libmosquitto closes the socket
        // once it is written and calls the disconnect callback. Corked, the DISCONNECT waits in
        // the socket for the close, whose FIN then rides on it: one segment instead of two.
        lifecycle.updateAttempt { $0.closingReason = "disconnected by the client" }
        // (A Unix socket has no segments and no cork.)
        let fd = mosquitto_socket(mosq)
        let cork = !settings.options.usesUnixSocket
        if cork { Self.setCork(fd, true) }
        let rc = mosquitto_disconnect(mosq)
        if rc != mosqSuccess, mosquitto_socket(mosq) >= 0 {
            _ = shutdown(mosquitto_socket(mosq), Int32(SHUT_RDWR))
            readAvailable(mosq)
        }
        if cork, mosquitto_socket(mosq) == fd { Self.setCork(fd, false) }  // still open: what is queued goes now
    }

    /// `disconnectAbruptly(reconnect: false)` already left the connected phases.
    private func dropOnLoop() {
        loopLocked { mosq in
            let reason = "connection dropped by disconnectAbruptly(): \(settings.options.endpointDescription)"
            if !lifecycle.wantsConnection { timerDeadline = nil }
            let fd = mosquitto_socket(mosq)
            guard fd >= 0 else {
                if !lifecycle.wantsConnection { setState(.disconnected(reason: reason)) }
                return
            }
            // No DISCONNECT: the broker sees the connection end and publishes the will.
            lifecycle.updateAttempt { $0.closingReason = reason }
            Self.endAbruptly(fd, unixSocket: settings.options.usesUnixSocket)
            readAvailable(mosq)
        }
    }

    static func setCork(_ fd: Int32, _ on: Bool) {
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Ends the connection on `fd` abruptly, without DISCONNECT, as a cut link would: the read
    /// side shut, so libmosquitto's next read sees the end and closes the socket; the broker sees a
    /// lost connection and publishes the will. Over TCP with a reset first armed (`SO_LINGER` 0: the
    /// close sends RST): one segment instead of the FIN exchange (four), and no TIME_WAIT socket
    /// left behind, for a reconnect storm drops every connection of the fleet at once (docs/fleet.md
    /// "Reconnect storms"). A Unix socket has no reset and no TIME_WAIT: the close is the broker's
    /// end of file, with no DISCONNECT before it, so the will goes out too.
    static func endAbruptly(_ fd: Int32, unixSocket: Bool) {
        if !unixSocket {
            var abortive = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
        }
        _ = shutdown(fd, Int32(SHUT_RD))
    }

    /// Frees the libmosquitto handle. After this no callback can run for this connection.
    func closeOnLoop() {
        loopLocked { mosq in
            let acknowledged = lifecycle.attempt?.acknowledged ?? false
            lifecycle = .closed
            timerDeadline = nil
            if mosquitto_socket(mosq) >= 0, acknowledged {
                _ = mosquitto_disconnect(mosq)  // best effort; the socket closes either way
            }
            mosquitto_destroy(mosq)
            handle = nil
            socketClosed = true
            presenceMid = 0
            presencePublished = false
            forgetGoodbye()
            setState(.disconnected(reason: "closed"))
            failAllWaiters(.closed)
            outbox += closeActions.map { Pending.closed($0) }
            closeActions.removeAll()
            if let inbox { outbox.append(.closed { inbox.finish() }) }
        }
    }

    // MARK: libmosquitto callbacks (mutex held, loop thread unless noted)

    func libraryDidConnect(code: Int32) {
        guard code == 0 else {
            let text =
                settings.options.protocolVersion == .v5
                ? String(cString: mosquitto_reason_string(code))
                : MosquittoLibrary.describeConnack(code)
            let refusal = "broker refused the connection (\(text)): \(settings.options.endpointDescription)"
            lifecycle.updateAttempt { $0.refusal = refusal }
            return
        }
        counters.connects += 1
        if counters.connects > 1 { counters.reconnects += 1 }
        let keepaliveCheck = firstKeepaliveCheck()
        lifecycle.updateAttempt {
            $0.acknowledged = true
            $0.failures = 0
            $0.deadline = keepaliveCheck
        }
        guard let handle, case .connecting(let attempt) = lifecycle else {
            // `stopping`: disconnect() raced the CONNACK.
            if let handle, case .stopping = lifecycle { _ = mosquitto_disconnect(handle) }
            return
        }
        lifecycle = .connected(attempt)
        let withPresence = presence != nil
        var lastMid: Int32 = 0
        subscriptions.forEach { subscription in
            var mid: Int32 = 0
            if mosquitto_subscribe(handle, &mid, subscription.filter, subscription.qos) == mosqSuccess {
                // With a presence its SUBACK is awaited here, not in the waiter table (one less
                // table per reconnect; a `subscribeAndWait` meanwhile sends its own SUBSCRIBE).
                if withPresence { lastMid = mid } else { waiterTable().subscribeMids[mid] = subscription.filter }
            }
        }
        guard withPresence else {
            setState(.connected)
            return
        }
        setState(.connected, deliver: false)
        if lastMid == 0 { presenceDue() } else { presenceMid = lastMid }
    }

    /// The subscriptions restored at the CONNACK are acknowledged (the broker answers in order, so
    /// the last one's SUBACK is the last to come): the presence goes out, queued behind the
    /// SUBSCRIBEs, and only then the owner learns `.connected`.
    private func presenceDue() {
        presenceMid = 0
        guard state == .connected else { return }
        if let presence, let handle, case .connected = lifecycle {
            for message in presence.messages() {
                _ = try? publishLocked(handle, topic: message.topic, payload: message.payload, qos: message.qos,
                                       retain: message.retain)
            }
            presencePublished = true
        }
        outbox.append(.state(.connected))
    }

    func libraryDidDisconnect(code: Int32, systemError: Int32) {
        socketClosed = true
        presenceMid = 0
        presencePublished = false
        forgetGoodbye()
        let attempt = lifecycle.attempt
        let reason = attempt?.closingReason ?? attempt?.refusal
        for token in waiters?.takeClosed() ?? [] { resume(token, .success(())) }
        releaseWaitersIfEmpty()
        guard lifecycle.wantsConnection else {
            if case .stopping = lifecycle { lifecycle = .idle }
            setState(.disconnected(reason: reason ?? "disconnected by the client"))
            return
        }
        let wasConnected = attempt?.acknowledged ?? false
        setState(
            .disconnected(
                reason: reason ?? settings.options.failureReason(code, systemError, wasConnected: wasConnected)))
        scheduleRetry(after: lifecycle.failures)
    }

    func libraryDidReceive(_ message: MQTTMessage) {
        counters.messagesIn += 1
        outbox.append(.message(message))
    }

    func libraryDroppedOversizeMessage() {
        counters.droppedOversize += 1
    }

    /// PUBACK for QoS 1 (or the packet written, for QoS 0; then on the publishing thread).
    func libraryDidPublish(mid: Int32) {
        counters.messagesAcknowledged += 1
        if goodbyeMid != 0, mid == goodbyeMid { goodbyeIsDue() }
        guard let tokens = waiters?.pubacks.removeValue(forKey: mid) else { return }
        for token in tokens { resume(token, .success(())) }
        releaseWaitersIfEmpty()
    }

    func libraryDidSubscribe(mid: Int32, grantedQoS: [Int32]) {
        if presenceMid != 0, mid == presenceMid { presenceDue() }
        guard let filter = waiters?.subscribeMids.removeValue(forKey: mid) else { return }
        let rejected = grantedQoS.contains { $0 < 0 || $0 > 2 }  // 0x80: failure
        let result: Result<Void, MQTTError> =
            rejected ? .failure(.subscribeFailed("broker rejected \(filter)")) : .success(())
        for token in waiters?.subacks.removeValue(forKey: filter) ?? [] { resume(token, result) }
        releaseWaitersIfEmpty()
    }

    // MARK: Helpers (mutex held)

    /// The socket is gone and a connection is still wanted: wait the back-off for `failures`
    /// attempts failed in a row, then try again (`timerFired`).
    private func scheduleRetry(after failures: Int) {
        let delay = settings.options.reconnect.delay(attempt: failures)
        lifecycle = .reconnectWait(failures: failures + 1)
        timerDeadline = monotonicSeconds() + delay
    }
}

