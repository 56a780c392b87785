import Foundation
import MQTTTransport

/// A broker stand-in inside the test process (issue 9: a device or an app user driven in a unit
/// test without a broker): exact topics and the `+`/`#` filters, retained messages, last wills.
/// No QoS, no sessions, no sockets; end-to-end tests use the real mosquitto (`TestBroker`).
public final class InProcessBus: @unchecked Sendable {
    private let lock = NSLock()
    private var endpoints: [ObjectIdentifier: InProcessTransport] = [:]
    private var retained: [String: MQTTMessage] = [:]
    private var log: [MQTTMessage] = []

    public init() {}

    /// A transport on this bus with `options` (client id, last will).
    public func transport(options: MQTTClientOptions) -> InProcessTransport {
        InProcessTransport(bus: self, options: options)
    }

    /// Every message published on the bus so far, in order.
    public var published: [MQTTMessage] { lock.withLock { log } }

    /// The retained message of `topic`, if any.
    public func retainedMessage(_ topic: String) -> MQTTMessage? { lock.withLock { retained[topic] } }

    /// Publishes as an outside client would (a test playing the app).
    public func publish(topic: String, payload: [UInt8], retain: Bool = false) {
        let message = MQTTMessage(topic: topic, payload: payload, qos: 1, retain: retain)
        let receivers: [InProcessTransport] = lock.withLock {
            log.append(message)
            if retain { retained[topic] = payload.isEmpty ? nil : message }
            return Array(endpoints.values)
        }
        for endpoint in receivers { endpoint.deliver(message) }
    }

    fileprivate func attach(_ endpoint: InProcessTransport) -> [MQTTMessage] {
        lock.withLock {
            endpoints[ObjectIdentifier(endpoint)] = endpoint
            return Array(retained.values)
        }
    }

    fileprivate func detach(_ endpoint: InProcessTransport) {
        _ = lock.withLock { endpoints.removeValue(forKey: ObjectIdentifier(endpoint)) }
    }

    /// MQTT 3.1.1 topic filter matching (4.7).
    public static func matches(filter: String, topic: String) -> Bool {
        let f = filter.split(separator: "/", omittingEmptySubsequences: false)
        let t = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in f.enumerated() {
            if level == "#" { return true }
            guard index < t.count else { return false }
            if level != "+", level != t[index] { return false }
        }
        return f.count == t.count
    }
}

/// One client of an `InProcessBus`.
public final class InProcessTransport: MessageTransport, @unchecked Sendable {
    public let options: MQTTClientOptions
    private weak var bus: InProcessBus?
    private let lock = NSLock()
    private var filters: Set<String> = []
    private var continuation: AsyncStream<MQTTInbound>.Continuation?
    private var current: MQTTConnectionState = .disconnected(reason: "not connected yet")
    private var statistics = MQTTClientCounters()

    init(bus: InProcessBus, options: MQTTClientOptions) {
        self.bus = bus
        self.options = options
    }

    public var state: MQTTConnectionState { lock.withLock { current } }
    public var counters: MQTTClientCounters { lock.withLock { statistics } }

    public func makeInboundStream(limit: Int) -> AsyncStream<MQTTInbound> {
        let (stream, continuation) = AsyncStream<MQTTInbound>.makeStream(bufferingPolicy: .bufferingOldest(max(1, limit)))
        lock.withLock { self.continuation = continuation }
        return stream
    }

    public func connect() {
        guard let bus else { return }
        let retained = bus.attach(self)
        let (stream, subscribed) = lock.withLock { () -> (AsyncStream<MQTTInbound>.Continuation?, Set<String>) in
            current = .connected
            statistics.connectAttempts += 1
            statistics.connects += 1
            return (continuation, filters)
        }
        stream?.yield(.state(.connected))
        for message in retained where subscribed.contains(where: { InProcessBus.matches(filter: $0, topic: message.topic) }) {
            deliver(message)
        }
    }

    public func waitUntilConnected(timeout: Duration) async -> Bool { state == .connected }

    public func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError) {
        lock.withLock { statistics.messagesOut += 1 }
        bus?.publish(topic: topic, payload: payload, retain: retain)
    }

    public func publishAndWaitForAck(topic: String, payload: [UInt8], qos: Int, retain: Bool,
                                     timeout: Duration) async throws(MQTTError) {
        try publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    public func subscribe(_ filter: String, qos: Int) throws(MQTTError) {
        _ = lock.withLock { filters.insert(filter) }
    }

    public func subscribeAndWait(_ filter: String, qos: Int, timeout: Duration) async throws(MQTTError) {
        try subscribe(filter, qos: qos)
    }

    public func disconnectAndWait(timeout: Duration) async -> Bool {
        bus?.detach(self)
        setDisconnected("disconnected")
        return true
    }

    public func disconnectAbruptly(reconnect: Bool) {
        bus?.detach(self)
        setDisconnected("dropped")
        if let will = options.will { bus?.publish(topic: will.topic, payload: will.payload, retain: will.retain) }
    }

    public func close() {
        bus?.detach(self)
        lock.withLock { continuation }?.finish()
    }

    private func setDisconnected(_ reason: String) {
        let stream: AsyncStream<MQTTInbound>.Continuation? = lock.withLock {
            current = .disconnected(reason: reason)
            return continuation
        }
        stream?.yield(.state(.disconnected(reason: reason)))
    }

    fileprivate func deliver(_ message: MQTTMessage) {
        let stream: AsyncStream<MQTTInbound>.Continuation? = lock.withLock {
            guard current == .connected, filters.contains(where: { InProcessBus.matches(filter: $0, topic: message.topic) })
            else { return nil }
            statistics.messagesIn += 1
            return continuation
        }
        stream?.yield(.message(message))
    }
}
