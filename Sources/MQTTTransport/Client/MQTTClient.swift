/// One MQTT connection (one device, one app simulator...) over libmosquitto, driven by an
/// `MQTTEventLoop` thread: thousands of clients share a few threads.
///
/// Usage:
/// ```swift
/// let client = try MQTTClient(options: MQTTClientOptions(clientID: "dev1", port: broker.port))
/// client.setMessageHandler { message in ... }        // on a loop thread; keep it short
/// client.setStateHandler { state in ... }
/// try client.subscribe("smart/device/in/dev1")        // remembered, restored on every reconnect
/// client.connect()                                    // returns at once; retries forever
/// try client.publish(topic: "smart/device/out/dev1", payload: bytes)   // QoS 1
/// await client.disconnectAndWait()                    // DISCONNECT: the broker drops the will
/// ```
///
/// Thread safety: every method may be called from any thread, including from inside the handlers.
/// The message and state handlers run on the client's loop thread, after libmosquitto's callback
/// returned and without any lock held, one at a time and in order. See `MQTTEventLoop`.
///
/// A broker that is down or refuses is not an error: the state becomes `.disconnected(reason:)`
/// and the client retries with exponential backoff and jitter (`MQTTReconnectPolicy`) until
/// `disconnect()` or `close()`. Publishes at QoS 1 made while disconnected are queued by
/// libmosquitto and sent after the next CONNACK.
///
/// Deinitialising the client closes it (its libmosquitto handle is freed on the loop thread).
public final class MQTTClient: Sendable {
    let connection: ClientConnection
    /// The loop driving this client (kept alive by the client).
    public let eventLoop: MQTTEventLoop

    /// Creates the client (not yet connected). `eventLoop` defaults to `MQTTEventLoop.shared()`.
    public init(options: MQTTClientOptions, eventLoop: MQTTEventLoop? = nil) throws(MQTTError) {
        let loop: MQTTEventLoop
        if let eventLoop { loop = eventLoop } else { loop = try MQTTEventLoop.shared() }
        self.eventLoop = loop
        connection = try ClientConnection(options: options, worker: loop.assignWorker())
    }

    deinit { connection.close() }

    public var options: MQTTClientOptions { connection.options }
    public var clientID: String { connection.options.clientID }

    /// The current connection state.
    public var state: MQTTConnectionState { connection.currentState }

    /// Reconnects, messages in and out, and the rest.
    public var counters: MQTTClientCounters { connection.currentCounters }

    /// The topic filters restored on every reconnect.
    public var subscriptions: [String] { connection.currentSubscriptions }

    /// Installs the handler for inbound messages (replacing any earlier one). Install it before
    /// `connect()` so nothing is missed. Runs on the loop thread.
    public func setMessageHandler(_ handler: (@Sendable (MQTTMessage) -> Void)?) {
        connection.setMessageHandler(handler)
    }

    /// Installs the handler for state changes: `.connecting`, `.connected`,
    /// `.disconnected(reason:)`. Runs on the loop thread.
    public func setStateHandler(_ handler: (@Sendable (MQTTConnectionState) -> Void)?) {
        connection.setStateHandler(handler)
    }

    /// Inbound messages as an ordered `AsyncStream`, for an actor to consume with `for await`
    /// (a `Task {}` per message would not keep their order). Installs the message handler,
    /// replacing any earlier one. Call before `connect()`. The stream finishes on `close()`.
    public func makeMessageStream(
        bufferingPolicy: AsyncStream<MQTTMessage>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<MQTTMessage> {
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(bufferingPolicy: bufferingPolicy)
        connection.setMessageHandler { continuation.yield($0) }
        connection.onClose { continuation.finish() }
        return stream
    }

    /// Inbound messages and state changes, in the order they happened, as one bounded stream (one
    /// consumer task per client instead of two). Installs both handlers. When `limit` items wait
    /// unread, newer ones are dropped and counted in `MQTTClientCounters.droppedInbound` (a stuck
    /// consumer costs bounded memory). Call before `connect()`. Finishes on `close()`.
    public func makeInboundStream(limit: Int = 1024) -> AsyncStream<MQTTInbound> {
        let (stream, continuation) = AsyncStream<MQTTInbound>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, limit)))
        let connection = self.connection
        connection.setMessageHandler { message in
            if case .dropped = continuation.yield(.message(message)) { connection.countInboundDrop() }
        }
        connection.setStateHandler { state in
            if case .dropped = continuation.yield(.state(state)) { connection.countInboundDrop() }
        }
        connection.onClose { continuation.finish() }
        return stream
    }

    /// Inbound messages and state changes, in the order they happened, into an `MQTTInbox` that
    /// calls `wake` when a drain must start (no stream and no consumer task while nothing waits:
    /// DESIGN.md "Scale"). Replaces the handlers. `.connecting` is not delivered to it (only
    /// `.connected` and `.disconnected`: a state nobody acts on would start a drain). Items past
    /// `limit` waiting are dropped and counted in `MQTTClientCounters.droppedInbound`. Call
    /// before `connect()`. The inbox is finished on `close()`.
    public func makeInbox(limit: Int, wake: @escaping @Sendable () -> Void) -> MQTTInbox {
        let inbox = MQTTInbox(limit: limit, wake: wake)
        connection.setInbox(inbox)
        return inbox
    }

    /// From now on `presence` is published at each connection's SUBACK (of the subscriptions
    /// restored after the CONNACK), on the loop thread, and the `.connected` state is delivered
    /// only after it (MQTTPresence). Returns true: this transport publishes it.
    @discardableResult
    public func setPresence(_ presence: MQTTPresence) -> Bool {
        connection.setPresence(presence)
        return true
    }

    /// No presence from now on. True when it went out on the current connection (an owner
    /// going offline then publishes its offline status even if it never saw `.connected`).
    public func clearPresence() -> Bool {
        connection.clearPresence()
    }

    /// State changes as an ordered `AsyncStream`; installs the state handler (see above).
    public func makeStateStream() -> AsyncStream<MQTTConnectionState> {
        let (stream, continuation) = AsyncStream<MQTTConnectionState>.makeStream()
        connection.setStateHandler { continuation.yield($0) }
        connection.onClose { continuation.finish() }
        return stream
    }

    /// Starts connecting and keeps the connection up (reconnecting with backoff) until
    /// `disconnect()`. Returns at once; watch the state handler or `waitUntilConnected`.
    /// Calling it again while active does nothing; after `disconnect()` it starts again.
    public func connect() {
        connection.connect()
    }

    /// Waits until the state is `.connected`; false after `timeout`.
    public func waitUntilConnected(timeout: Duration = .seconds(5)) async -> Bool {
        await connection.waitUntilConnected(timeout: timeout)
    }

    /// Hands a message to libmosquitto and returns. On a connected client the bytes are written
    /// to the socket on the calling thread before this returns (TCP_NODELAY is always on).
    /// QoS 1 (the default, PROTOCOL.md section 1) while disconnected is queued and sent after the
    /// next CONNACK; QoS 0 while disconnected throws.
    public func publish(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) throws(MQTTError) {
        try connection.publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    /// Publishes and waits for the broker's PUBACK (QoS 1); QoS 0 returns once written.
    public func publishAndWaitForAck(
        topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false,
        timeout: Duration = .seconds(5)
    ) async throws(MQTTError) {
        try await connection.publishAcknowledged(
            topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout
        ).get()
    }

    /// Subscribes now if connected, and after every (re)connect. Returns at once.
    public func subscribe(_ filter: String, qos: Int = 1) throws(MQTTError) {
        try connection.subscribe(filter, qos: qos)
    }

    /// Subscribes and waits for the broker's SUBACK (now if connected, else after the next
    /// connect). Throws `.subscribeFailed` if the broker rejects the filter.
    public func subscribeAndWait(_ filter: String, qos: Int = 1, timeout: Duration = .seconds(5)) async throws(MQTTError) {
        try await connection.subscribeAcknowledged(filter, qos: qos, timeout: timeout).get()
    }

    /// Forgets a filter and unsubscribes if connected.
    public func unsubscribe(_ filter: String) throws(MQTTError) {
        try connection.unsubscribe(filter)
    }

    /// Clean disconnect: sends DISCONNECT (so the broker discards the will) and stops
    /// reconnecting. Returns at once; the state becomes `.disconnected(reason:)`.
    public func disconnect() {
        connection.disconnect()
    }

    /// `disconnect()`, then waits until the socket is closed; false after `timeout`.
    @discardableResult
    public func disconnectAndWait(timeout: Duration = .seconds(3)) async -> Bool {
        await connection.disconnectAndWait(timeout: timeout)
    }

    /// A clean goodbye: publishes `last` (if given), then sends DISCONNECT once the broker has
    /// acknowledged it (QoS 1 or 2; from the loop thread at its PUBACK, or after `acknowledgement`
    /// without it), and stops reconnecting. Waits once, for the socket to close: true once it has
    /// (at once when there was none), false when it had not within `acknowledgement + close`. The
    /// broker handles the packets in order, so `last` is stored before the disconnect (a device's
    /// retained offline status, PROTOCOL.md 3.3).
    @discardableResult
    public func publishThenDisconnect(_ last: MQTTMessage?, acknowledgement: Duration = .seconds(5),
                                      close: Duration = .seconds(1)) async -> Bool {
        connection.beginGoodbye(last, acknowledgement: acknowledgement)
        return await connection.waitUntilClosed(timeout: acknowledgement + close)
    }

    /// `publishThenDisconnect` without the wait: `last` goes now, DISCONNECT at its PUBACK (or
    /// after `acknowledgement`); nothing is awaited and nothing posted to the loop thread while
    /// connected. Then `waitUntilClosed`.
    public func beginGoodbye(_ last: MQTTMessage?, acknowledgement: Duration = .seconds(5)) {
        connection.beginGoodbye(last, acknowledgement: acknowledgement)
    }

    /// Waits until the socket is closed: true (at once when there is none), false after `timeout`.
    @discardableResult
    public func waitUntilClosed(timeout: Duration) async -> Bool {
        await connection.waitUntilClosed(timeout: timeout)
    }

    /// Fault injection: ends the TCP connection without DISCONNECT, as a crash or a pulled cable
    /// would, so the broker publishes the will. With `reconnect`, the client then reconnects as
    /// after any connection loss; without, it stays disconnected until `connect()`.
    public func disconnectAbruptly(reconnect: Bool = false) {
        connection.disconnectAbruptly(reconnect: reconnect)
    }

    /// Disconnects (cleanly if connected) and frees the libmosquitto handle. The client cannot be
    /// used afterwards; pending waits fail with `.closed`.
    public func close() {
        connection.close()
    }
}
