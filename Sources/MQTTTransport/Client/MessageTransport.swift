/// What a device or an app user needs of its broker connection (issue 9: the transport is
/// injected into `Device` and `AppUser`). `MQTTClient` is the real one; a test can drive a device
/// through an in-process stand-in without a broker.
public protocol MessageTransport: AnyObject, Sendable {
    var options: MQTTClientOptions { get }
    var state: MQTTConnectionState { get }
    var counters: MQTTClientCounters { get }
    /// Inbound messages and state changes in order, bounded (see `MQTTClient.makeInboundStream`).
    func makeInboundStream(limit: Int) -> AsyncStream<MQTTInbound>
    /// The same, pulled by the consumer (see `MQTTClient.makeInbox`): no task while nothing
    /// waits. The default feeds the inbox from `makeInboundStream` with one task.
    func makeInbox(limit: Int, wake: @escaping @Sendable () -> Void) -> MQTTInbox
    /// Publish `presence` at each connection's SUBACK and deliver `.connected` after it (see
    /// `MQTTClient.setPresence`). False: the transport does not (the default); its owner publishes
    /// its presence itself.
    func setPresence(_ presence: MQTTPresence) -> Bool
    /// No presence from now on; true when the transport published it on the current connection.
    func clearPresence() -> Bool
    func connect()
    func waitUntilConnected(timeout: Duration) async -> Bool
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError)
    func publishAndWaitForAck(topic: String, payload: [UInt8], qos: Int, retain: Bool, timeout: Duration) async throws(MQTTError)
    func subscribe(_ filter: String, qos: Int) throws(MQTTError)
    func subscribeAndWait(_ filter: String, qos: Int, timeout: Duration) async throws(MQTTError)
    func disconnectAndWait(timeout: Duration) async -> Bool
    /// Publishes `last` (if given) and disconnects cleanly once the broker has acknowledged it;
    /// true once closed (see `MQTTClient.publishThenDisconnect`). The default waits for the
    /// PUBACK, then for the disconnect.
    func publishThenDisconnect(_ last: MQTTMessage?, acknowledgement: Duration, close: Duration) async -> Bool
    /// `publishThenDisconnect` in two halves: the first waits for nothing, the second for the
    /// close (see `MQTTClient.beginGoodbye`). The defaults publish without waiting for the PUBACK,
    /// then disconnect and wait.
    func beginGoodbye(_ last: MQTTMessage?, acknowledgement: Duration)
    func waitUntilClosed(timeout: Duration) async -> Bool
    /// Drops the connection without a DISCONNECT (the broker publishes the last will).
    func disconnectAbruptly(reconnect: Bool)
    func close()
}

extension MQTTClient: MessageTransport {}

extension MessageTransport {
    public func setPresence(_ presence: MQTTPresence) -> Bool { false }
    public func clearPresence() -> Bool { false }

    public func publishThenDisconnect(_ last: MQTTMessage?, acknowledgement: Duration, close: Duration) async -> Bool {
        if let last {
            try? await publishAndWaitForAck(topic: last.topic, payload: last.payload, qos: last.qos, retain: last.retain,
                                            timeout: acknowledgement)
        }
        return await disconnectAndWait(timeout: close)
    }

    public func beginGoodbye(_ last: MQTTMessage?, acknowledgement: Duration) {
        if let last { try? publish(topic: last.topic, payload: last.payload, qos: last.qos, retain: last.retain) }
    }

    public func waitUntilClosed(timeout: Duration) async -> Bool {
        await disconnectAndWait(timeout: timeout)
    }

    /// For transports without an inbox of their own (test stand-ins, the cloud's device link):
    /// one task moves the stream's items into the inbox, in order, until the stream finishes.
    public func makeInbox(limit: Int, wake: @escaping @Sendable () -> Void) -> MQTTInbox {
        let inbox = MQTTInbox(limit: limit, wake: wake)
        let stream = makeInboundStream(limit: limit)
        Task {
            for await item in stream { inbox.push(item) }
        }
        return inbox
    }
}
