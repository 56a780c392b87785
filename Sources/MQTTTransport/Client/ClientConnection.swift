import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

typealias WaitContinuation = CheckedContinuation<Result<Void, MQTTError>, Never>

/// The engine behind one `MQTTClient`: a libmosquitto handle, its mutex, its state, and what the
/// loop thread does for it. `MQTTClient` is the public face; see `MQTTEventLoop` for threading.
///
/// Every libmosquitto call on `handle` happens with `mutex` held (`locked` / `loopLocked`).
final class ClientConnection: @unchecked Sendable {
    let options: MQTTClientOptions
    let worker: EventLoopWorker
    private let mutex = PThreadMutex()

    // Guarded by `mutex`.
    private var handle: OpaquePointer?
    private var wantsConnection = false
    private var state: MQTTConnectionState = .disconnected(reason: "not connected yet")
    private var subscriptions: [(filter: String, qos: Int32)] = []
    private var counters = MQTTClientCounters()
    private var retryAttempt = 0
    private var attemptConnected = false
    private var attemptStartedAt = 0.0
    private var refusalReason: String?
    private var overrideReason: String?
    private var socketClosed = false
    private var flushPending = false
    private var outbox: [Pending] = []
    private var messageHandler: (@Sendable (MQTTMessage) -> Void)?
    private var stateHandler: (@Sendable (MQTTConnectionState) -> Void)?
    private var waiters = WaiterTable()
    private var closeActions: [@Sendable () -> Void] = []

    // Loop thread only (callbacks that touch them run on the loop thread too).
    var registeredFD: Int32 = -1
    var registeredEvents: UInt32 = 0
    var timerDeadline: Double?
    /// The deadline the worker's heap holds for this client (loop thread only).
    var scheduledDeadline: Double?

    private enum Pending {
        case message(MQTTMessage)
        case state(MQTTConnectionState)
        case resume(WaitContinuation, Result<Void, MQTTError>)
        case closed(@Sendable () -> Void)
    }

    init(options: MQTTClientOptions, worker: EventLoopWorker) throws(MQTTError) {
        self.options = options
        self.worker = worker
        guard MosquittoLibrary.ensureInitialized() else {
            throw .library("mosquitto_lib_init failed")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let id: String? = options.clientID.isEmpty ? nil : options.clientID
        guard let created = mosquitto_new(id, options.cleanSession, context) else {
            throw .library("mosquitto_new failed: \(errnoDescription(errno))")
        }
        // One descriptor per client instead of three (MosquittoSocketpair, DescriptorBudget).
        MosquittoSocketpair.release(created)
        do {
            try Self.configure(created, options: options)
        } catch {
            mosquitto_destroy(created)
            throw error
        }
        handle = created
        worker.post { [self] in self.worker.attach(self) }
    }

    private static func configure(_ mosq: OpaquePointer, options: MQTTClientOptions) throws(MQTTError) {
        func check(_ rc: Int32, _ what: String) throws(MQTTError) {
            guard rc == mosqSuccess else {
                throw .invalidOptions("\(what): \(MosquittoLibrary.describe(rc))")
            }
        }
        try check(
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, options.protocolVersion == .v5 ? 5 : 4),
            "protocol version")
        // DESIGN.md: loopback latency is Nagle's unless both ends disable it.
        try check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        try check(
            mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, Int32(clamping: max(1, options.maxInflightMessages))),
            "max inflight messages")
        if options.username != nil || options.password != nil {
            try check(
                mosquitto_username_pw_set(mosq, options.username, options.password),
                "username/password")
        }
        if let will = options.will {
            guard (0...2).contains(will.qos) else { throw .invalidOptions("will QoS \(will.qos)") }
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    mosq, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try check(rc, "last will on \(will.topic)")
        }
        if let tls = options.tls {
            if (tls.certFile == nil) != (tls.keyFile == nil) {
                throw .invalidOptions("TLS client certificate and key must be given together")
            }
            try check(
                mosquitto_tls_set(mosq, tls.caFile, nil, tls.certFile, tls.keyFile, nil),
                "TLS files (CA \(tls.caFile))")
            if tls.allowHostnameMismatch {
                try check(mosquitto_tls_insecure_set(mosq, true), "TLS insecure")
            }
        }
        mosquitto_connect_callback_set(mosq, mqttConnectCallback)
        mosquitto_disconnect_callback_set(mosq, mqttDisconnectCallback)
        mosquitto_message_callback_set(mosq, mqttMessageCallback)
        mosquitto_publish_callback_set(mosq, mqttPublishCallback)
        mosquitto_subscribe_callback_set(mosq, mqttSubscribeCallback)
    }

    // MARK: Locking and delivery

    /// Runs `body` with the mutex held, then (unlocked) delivers what the callbacks recorded and,
    /// if libmosquitto still has bytes to write, asks the loop thread to flush them.
    private func locked<T, E: Error>(_ body: (OpaquePointer?) throws(E) -> T) throws(E) -> T {
        mutex.lock()
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
        let (pending, onMessage, onState) = takeOutbox()
        mutex.unlock()
        deliver(pending, onMessage, onState)
        if flush { worker.post { [self] in self.flushOnLoop() } }
        return try result.get()
    }

    /// `locked` for the loop thread: afterwards the worker re-syncs epoll and timers.
    private func loopLocked(_ body: (OpaquePointer) -> Void) {
        mutex.lock()
        if let handle { body(handle) }
        worker.synchronize(self, handle: handle, socketClosed: socketClosed)
        socketClosed = false
        let (pending, onMessage, onState) = takeOutbox()
        mutex.unlock()
        deliver(pending, onMessage, onState)
    }

    private func takeOutbox() -> (
        [Pending], (@Sendable (MQTTMessage) -> Void)?, (@Sendable (MQTTConnectionState) -> Void)?
    ) {
        guard !outbox.isEmpty else { return ([], nil, nil) }
        let taken = outbox
        outbox.removeAll(keepingCapacity: true)
        return (taken, messageHandler, stateHandler)
    }

    private func deliver(
        _ pending: [Pending], _ onMessage: (@Sendable (MQTTMessage) -> Void)?,
        _ onState: (@Sendable (MQTTConnectionState) -> Void)?
    ) {
        for item in pending {
            switch item {
            case .message(let message): onMessage?(message)
            case .state(let state): onState?(state)
            case .resume(let continuation, let result): continuation.resume(returning: result)
            case .closed(let action): action()
            }
        }
    }

    /// With the mutex held.
    private func setState(_ new: MQTTConnectionState) {
        guard new != state else { return }
        state = new
        outbox.append(.state(new))
        if new == .connected {
            for token in waiters.takeConnected() { resume(token, .success(())) }
        }
    }

    /// With the mutex held: resumes a waiter (after unlock) if it has not timed out already.
    private func resume(_ token: UInt64, _ result: Result<Void, MQTTError>) {
        if let continuation = waiters.continuations.removeValue(forKey: token) {
            outbox.append(.resume(continuation, result))
        }
        waiters.timeouts.removeValue(forKey: token)?.cancel()
    }

    private func failAllWaiters(_ error: MQTTError) {
        for (_, continuation) in waiters.continuations {
            outbox.append(.resume(continuation, .failure(error)))
        }
        for (_, timer) in waiters.timeouts { timer.cancel() }
        waiters = WaiterTable()
    }

    // MARK: Public operations (any thread)

    var currentState: MQTTConnectionState { mutex.withLock { state } }
    var currentCounters: MQTTClientCounters { mutex.withLock { counters } }
    var currentSubscriptions: [String] { mutex.withLock { subscriptions.map(\.filter) } }

    func setMessageHandler(_ handler: (@Sendable (MQTTMessage) -> Void)?) {
        mutex.withLock { messageHandler = handler }
    }

    func countInboundDrop() {
        mutex.withLock { counters.droppedInbound += 1 }
    }

    func setStateHandler(_ handler: (@Sendable (MQTTConnectionState) -> Void)?) {
        mutex.withLock { stateHandler = handler }
    }

    /// Runs `action` once the client is closed (at once if it already is).
    func onClose(_ action: @escaping @Sendable () -> Void) {
        let closed = mutex.withLock { () -> Bool in
            if handle == nil { return true }
            closeActions.append(action)
            return false
        }
        if closed { action() }
    }

    func connect() {
        let start = mutex.withLock { () -> Bool in
            guard handle != nil, !wantsConnection else { return false }
            wantsConnection = true
            retryAttempt = 0
            return true
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

    private func publishLocked(
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

    func publishAcknowledged(
        topic: String, payload: [UInt8], qos: Int, retain: Bool, timeout: Duration
    ) async -> Result<Void, MQTTError> {
        await wait(timeout: timeout, what: "PUBACK for \(topic)") { (mosq, token) throws(MQTTError) in
            let mid = try publishLocked(mosq, topic: topic, payload: payload, qos: qos, retain: retain)
            guard qos > 0 else { return true }
            waiters.pubacks[mid, default: []].append(token)
            return false
        }
    }

    func subscribe(_ filter: String, qos: Int) throws(MQTTError) {
        try locked { (mosq) throws(MQTTError) in try subscribeLocked(mosq, filter: filter, qos: qos) }
    }

    func subscribeAcknowledged(_ filter: String, qos: Int, timeout: Duration) async -> Result<Void, MQTTError> {
        await wait(timeout: timeout, what: "SUBACK for \(filter)") { (mosq, token) throws(MQTTError) in
            waiters.subacks[filter, default: []].append(token)
            try subscribeLocked(mosq, filter: filter, qos: qos)
            return false
        }
    }

    private func subscribeLocked(_ mosq: OpaquePointer?, filter: String, qos: Int) throws(MQTTError) {
        guard let mosq else { throw .closed }
        guard (0...2).contains(qos) else { throw .subscribeFailed("QoS \(qos) is not 0, 1 or 2") }
        guard mosquitto_sub_topic_check(filter) == mosqSuccess else { throw .invalidTopic(filter) }
        if let index = subscriptions.firstIndex(where: { $0.filter == filter }) {
            subscriptions[index].qos = Int32(qos)
        } else {
            subscriptions.append((filter, Int32(qos)))
        }
        // Not connected: remembered, and sent with the others after the next CONNACK.
        guard state == .connected else { return }
        var mid: Int32 = 0
        let rc = mosquitto_subscribe(mosq, &mid, filter, Int32(qos))
        if rc == mosqSuccess {
            waiters.subscribeMids[mid] = filter
        } else if rc != mosqNoConnection {
            throw .subscribeFailed("\(MosquittoLibrary.describe(rc)): \(filter)")
        }
    }

    func unsubscribe(_ filter: String) throws(MQTTError) {
        try locked { (mosq) throws(MQTTError) in
            guard let mosq else { throw .closed }
            subscriptions.removeAll { $0.filter == filter }
            guard state == .connected else { return }
            let rc = mosquitto_unsubscribe(mosq, nil, filter)
            if rc != mosqSuccess && rc != mosqNoConnection {
                throw .subscribeFailed("unsubscribe \(filter): \(MosquittoLibrary.describe(rc))")
            }
        }
    }

    func waitUntilConnected(timeout: Duration) async -> Bool {
        let result = await wait(timeout: timeout, what: "connection") { (_, token) throws(MQTTError) in
            if state == .connected { return true }
            waiters.connected.append(token)
            return false
        }
        return (try? result.get()) != nil
    }

    func disconnect() {
        mutex.withLock { wantsConnection = false }
        worker.post { [self] in self.disconnectOnLoop() }
    }

    func disconnectAndWait(timeout: Duration) async -> Bool {
        let result = await wait(timeout: timeout, what: "disconnect") { (mosq, token) throws(MQTTError) in
            wantsConnection = false
            worker.post { [self] in self.disconnectOnLoop() }
            guard let mosq, mosquitto_socket(mosq) >= 0 else { return true }
            waiters.closed.append(token)
            return false
        }
        return (try? result.get()) != nil
    }

    func disconnectAbruptly(reconnect: Bool) {
        if !reconnect { mutex.withLock { wantsConnection = false } }
        worker.post { [self] in self.dropOnLoop() }
    }

    func close() {
        let posted = worker.post { [self] in
            self.closeOnLoop()
            self.worker.detach(self)
        }
        if !posted {  // the loop is gone: nothing else can be using the handle
            let actions = mutex.withLock { () -> [@Sendable () -> Void] in
                if let handle { mosquitto_destroy(handle) }
                handle = nil
                defer { closeActions.removeAll() }
                return closeActions
            }
            for action in actions { action() }
        }
    }

    /// Registers a waiter with the mutex held (`register` returns true when already satisfied),
    /// then waits for it to be resumed, or for the timeout.
    private func wait(
        timeout: Duration, what: String,
        register: (OpaquePointer?, UInt64) throws(MQTTError) -> Bool
    ) async -> Result<Void, MQTTError> {
        await withCheckedContinuation { (continuation: WaitContinuation) in
            let outcome = locked { (mosq) -> Result<UInt64?, MQTTError> in
                let token = waiters.nextToken()
                do throws(MQTTError) {
                    if try register(mosq, token) { return .success(nil) }
                } catch {
                    return .failure(error)
                }
                waiters.continuations[token] = continuation
                return .success(token)
            }
            switch outcome {
            case .failure(let error):
                continuation.resume(returning: .failure(error))
            case .success(nil):
                continuation.resume(returning: .success(()))
            case .success(let token?):
                let timer = Task { [self] in
                    do { try await Task.sleep(for: timeout) } catch { return }  // cancelled: resumed
                    self.locked { _ in self.resume(token, .failure(.timedOut(what))) }
                }
                mutex.withLock {
                    if waiters.continuations[token] != nil {
                        waiters.timeouts[token] = timer
                    } else {
                        timer.cancel()
                    }
                }
            }
        }
    }

    // MARK: Loop thread

    func startAttempt() {
        loopLocked { mosq in
            guard wantsConnection, mosquitto_socket(mosq) < 0 else { return }
            timerDeadline = nil
            counters.connectAttempts += 1
            attemptStartedAt = monotonicSeconds()
            attemptConnected = false
            refusalReason = nil
            overrideReason = nil
            setState(.connecting)
            errno = 0
            let rc = mosquitto_connect_bind_async(
                mosq, options.host, Int32(clamping: options.port), Int32(clamping: options.keepAlive),
                options.bindAddress)
            let systemError = errno
            guard rc == mosqSuccess else {
                setState(.disconnected(reason: failureReason(rc, systemError, wasConnected: false)))
                scheduleRetry()
                return
            }
            let fd = mosquitto_socket(mosq)
            if fd >= 0 {
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
            }
        }
    }

    /// Reads until the socket would block (libmosquitto reads a bounded number of packets per call).
    private func readAvailable(_ mosq: OpaquePointer) {
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

    func timerFired() {
        let retry = mutex.withLock { () -> Bool in
            guard let deadline = timerDeadline, deadline <= monotonicSeconds() else { return false }
            timerDeadline = nil
            return wantsConnection
        }
        if retry { startAttempt() } else { loopLocked { _ in } }
    }

    func housekeeping(now: Double) {
        loopLocked { mosq in
            let fd = mosquitto_socket(mosq)
            guard fd >= 0 else { return }
            if attemptConnected {
                _ = mosquitto_loop_misc(mosq)  // keepalive: PINGREQ, and the PINGRESP deadline
            } else if now - attemptStartedAt > options.connectTimeout {
                overrideReason =
                    "no CONNACK within \(options.connectTimeout) s: \(options.endpointDescription)"
                _ = shutdown(fd, Int32(SHUT_RDWR))
                if mosquitto_want_write(mosq) { _ = mosquitto_loop_write(mosq, 1) }
                if mosquitto_socket(mosq) >= 0 { readAvailable(mosq) }
            }
        }
    }

    /// `disconnect()` already cleared `wantsConnection`; if `connect()` set it again since, the
    /// current connection is still closed cleanly and the client then reconnects.
    private func disconnectOnLoop() {
        loopLocked { mosq in
            timerDeadline = nil
            retryAttempt = 0
            guard mosquitto_socket(mosq) >= 0 else {
                if !wantsConnection { setState(.disconnected(reason: "disconnected by the client")) }
                for token in waiters.takeClosed() { resume(token, .success(())) }
                return
            }
            // Sends DISCONNECT (the broker discards the will); libmosquitto closes the socket
            // once it is written and calls the disconnect callback.
            overrideReason = "disconnected by the client"
            let rc = mosquitto_disconnect(mosq)
            if rc != mosqSuccess, mosquitto_socket(mosq) >= 0 {
                _ = shutdown(mosquitto_socket(mosq), Int32(SHUT_RDWR))
                readAvailable(mosq)
            }
        }
    }

    /// `disconnectAbruptly(reconnect: false)` already cleared `wantsConnection`.
    private func dropOnLoop() {
        loopLocked { mosq in
            let reason = "connection dropped by disconnectAbruptly(): \(options.endpointDescription)"
            if !wantsConnection { timerDeadline = nil }
            let fd = mosquitto_socket(mosq)
            guard fd >= 0 else {
                if !wantsConnection { setState(.disconnected(reason: reason)) }
                return
            }
            // No DISCONNECT: the broker sees the TCP connection end and publishes the will.
            overrideReason = reason
            _ = shutdown(fd, Int32(SHUT_RDWR))
            readAvailable(mosq)
        }
    }

    /// Frees the libmosquitto handle. After this no callback can run for this connection.
    func closeOnLoop() {
        loopLocked { mosq in
            wantsConnection = false
            timerDeadline = nil
            if mosquitto_socket(mosq) >= 0, attemptConnected {
                _ = mosquitto_disconnect(mosq)  // best effort; the socket closes either way
            }
            mosquitto_destroy(mosq)
            handle = nil
            socketClosed = true
            setState(.disconnected(reason: "closed"))
            failAllWaiters(.closed)
            outbox += closeActions.map { Pending.closed($0) }
            closeActions.removeAll()
        }
    }

    // MARK: libmosquitto callbacks (mutex held, loop thread unless noted)

    func libraryDidConnect(code: Int32) {
        guard code == 0 else {
            let text =
                options.protocolVersion == .v5
                ? String(cString: mosquitto_reason_string(code))
                : MosquittoLibrary.describeConnack(code)
            refusalReason = "broker refused the connection (\(text)): \(options.endpointDescription)"
            return
        }
        attemptConnected = true
        counters.connects += 1
        if counters.connects > 1 { counters.reconnects += 1 }
        retryAttempt = 0
        guard let handle, wantsConnection else {
            if let handle { _ = mosquitto_disconnect(handle) }  // disconnect() raced the CONNACK
            return
        }
        for subscription in subscriptions {
            var mid: Int32 = 0
            if mosquitto_subscribe(handle, &mid, subscription.filter, subscription.qos) == mosqSuccess {
                waiters.subscribeMids[mid] = subscription.filter
            }
        }
        setState(.connected)
    }

    func libraryDidDisconnect(code: Int32, systemError: Int32) {
        socketClosed = true
        let wasConnected = attemptConnected
        attemptConnected = false
        let reason = overrideReason ?? refusalReason
        overrideReason = nil
        refusalReason = nil
        for token in waiters.takeClosed() { resume(token, .success(())) }
        guard wantsConnection else {
            setState(.disconnected(reason: reason ?? "disconnected by the client"))
            return
        }
        setState(
            .disconnected(
                reason: reason ?? failureReason(code, systemError, wasConnected: wasConnected)))
        scheduleRetry()
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
        for token in waiters.pubacks.removeValue(forKey: mid) ?? [] { resume(token, .success(())) }
    }

    func libraryDidSubscribe(mid: Int32, grantedQoS: [Int32]) {
        guard let filter = waiters.subscribeMids.removeValue(forKey: mid) else { return }
        let rejected = grantedQoS.contains { $0 < 0 || $0 > 2 }  // 0x80: failure
        let result: Result<Void, MQTTError> =
            rejected ? .failure(.subscribeFailed("broker rejected \(filter)")) : .success(())
        for token in waiters.subacks.removeValue(forKey: filter) ?? [] { resume(token, result) }
    }

    // MARK: Helpers (mutex held)

    private func scheduleRetry() {
        let delay = options.reconnect.delay(attempt: retryAttempt)
        retryAttempt += 1
        timerDeadline = monotonicSeconds() + delay
    }

    /// A reason a person can act on, e.g. "connection refused: 127.0.0.1:1883".
    private func failureReason(_ rc: Int32, _ systemError: Int32, wasConnected: Bool) -> String {
        let endpoint = options.endpointDescription
        switch rc {
        case mosqErrno:
            switch systemError {
            case ECONNREFUSED: return "connection refused: \(endpoint)"
            case ECONNRESET: return "connection reset by the broker: \(endpoint)"
            case ETIMEDOUT: return "connection timed out: \(endpoint)"
            case EHOSTUNREACH, ENETUNREACH: return "broker unreachable: \(endpoint)"
            case EPIPE: return "connection lost: \(endpoint)"
            case 0: return "connection failed: \(endpoint)"
            default: return "\(errnoDescription(systemError)): \(endpoint)"
            }
        case mosqConnectionLost:
            return wasConnected
                ? "connection lost: \(endpoint)" : "connection closed by the broker: \(endpoint)"
        case mosqConnectionRefused:
            return "broker refused the connection: \(endpoint)"
        case MOSQ_ERR_KEEPALIVE.rawValue:
            return "keepalive timeout (no PINGRESP): \(endpoint)"
        case MOSQ_ERR_EAI.rawValue, MOSQ_ERR_LOOKUP.rawValue:
            return "cannot resolve broker host: \(options.host)"
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return "TLS handshake failed: \(endpoint)"
        case MOSQ_ERR_PROTOCOL.rawValue, MOSQ_ERR_MALFORMED_PACKET.rawValue:
            return "protocol error from the broker: \(endpoint)"
        default:
            return "\(MosquittoLibrary.describe(rc)): \(endpoint)"
        }
    }
}

/// Who waits for what. Tokens whose waiter timed out stay in the indexes until the event comes.
private struct WaiterTable {
    var continuations: [UInt64: WaitContinuation] = [:]
    var timeouts: [UInt64: Task<Void, Never>] = [:]
    var connected: [UInt64] = []
    var closed: [UInt64] = []
    var pubacks: [Int32: [UInt64]] = [:]
    var subacks: [String: [UInt64]] = [:]
    var subscribeMids: [Int32: String] = [:]
    private var last: UInt64 = 0

    mutating func nextToken() -> UInt64 {
        last &+= 1
        return last
    }

    mutating func takeConnected() -> [UInt64] {
        defer { connected.removeAll() }
        return connected
    }

    mutating func takeClosed() -> [UInt64] {
        defer { closed.removeAll() }
        return closed
    }
}
