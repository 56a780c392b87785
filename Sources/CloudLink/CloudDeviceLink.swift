import MQTTTransport
import Synchronization

/// The device link (PROTOCOL.md 9.4) as the `Device` sees it: the runner's MQTT connection, shared.
///
/// The join runner owns the connection (it opened it with the credentials activation earned, it
/// watches it for CONNACK 5 and it reads `rpc/rsp`); the device runs sections 3-8 on it through
/// this `MessageTransport`: it publishes through it, and receives what arrives on its `in` topic and
/// every change of the connection's state. The device does not connect or close the connection:
/// `connect()` only replays the current state, and `disconnectAndWait`/`close` end the device's use
/// of it (the runner closes the connection itself, after the device published its offline status).
public final class CloudDeviceLink: MessageTransport {
    let client: MQTTClient
    /// The topic whose messages are the device's (`smart/device/in/<devId>`).
    public let inTopic: String
    private struct Sink {
        var continuation: AsyncStream<MQTTInbound>.Continuation?
        /// Messages that arrived before the device made its stream (between `.joined` and `Device.start`).
        var early: [MQTTInbound] = []
        var finished = false
    }

    /// Items kept for a device that has not made its stream yet, at most.
    static let earlyLimit = 64
    private let sink = Mutex(Sink())

    init(client: MQTTClient, inTopic: String) {
        self.client = client
        self.inTopic = inTopic
    }

    /// The runner hands over one inbound item (a message on `inTopic`, or a state change).
    func deliver(_ item: MQTTInbound) {
        let continuation = sink.withLock { sink -> AsyncStream<MQTTInbound>.Continuation? in
            // Only messages are kept: the device learns the state from `connect()`.
            if case .message = item, sink.continuation == nil, !sink.finished, sink.early.count < Self.earlyLimit {
                sink.early.append(item)
            }
            return sink.continuation
        }
        continuation?.yield(item)
    }

    /// The connection is gone for good (the runner closed it): the device's stream ends.
    func finish() {
        sink.withLock { sink in
            sink.finished = true
            sink.early.removeAll()
            sink.continuation?.finish()
            sink.continuation = nil
        }
    }

    public var options: MQTTClientOptions { client.options }
    public var state: MQTTConnectionState { client.state }
    public var counters: MQTTClientCounters { client.counters }

    public func makeInboundStream(limit: Int) -> AsyncStream<MQTTInbound> {
        let (stream, continuation) = AsyncStream<MQTTInbound>.makeStream(bufferingPolicy: .bufferingOldest(max(1, limit)))
        sink.withLock { sink in
            sink.continuation?.finish()
            guard !sink.finished else {
                continuation.finish()
                return
            }
            for item in sink.early { continuation.yield(item) }
            sink.early.removeAll()
            sink.continuation = continuation
        }
        return stream
    }

    /// The connection is the runner's and already up: the device is told its current state.
    public func connect() {
        deliver(.state(client.state))
    }

    public func waitUntilConnected(timeout: Duration) async -> Bool {
        await client.waitUntilConnected(timeout: timeout)
    }

    public func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError) {
        try client.publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    public func publishAndWaitForAck(topic: String, payload: [UInt8], qos: Int, retain: Bool,
                                     timeout: Duration) async throws(MQTTError) {
        try await client.publishAndWaitForAck(topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout)
    }

    public func subscribe(_ filter: String, qos: Int) throws(MQTTError) {
        try client.subscribe(filter, qos: qos)
    }

    public func subscribeAndWait(_ filter: String, qos: Int, timeout: Duration) async throws(MQTTError) {
        try await client.subscribeAndWait(filter, qos: qos, timeout: timeout)
    }

    /// The device is done with the link; the connection stays the runner's to close.
    public func disconnectAndWait(timeout: Duration) async -> Bool {
        finish()
        return true
    }

    public func disconnectAbruptly(reconnect: Bool) {
        client.disconnectAbruptly(reconnect: reconnect)
    }

    public func close() {
        finish()
    }
}
