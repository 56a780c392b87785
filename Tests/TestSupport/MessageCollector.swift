import Synchronization
import MQTTTransport

/// A subscriber that keeps every message it receives, for "wait until N messages on topic X
/// within T seconds". Create with `MessageCollector.start(...)`; it is subscribed (SUBACK seen)
/// when that returns.
public final class MessageCollector: Sendable {
    public let client: MQTTClient
    private let received = Received()

    /// What arrived, each with the moment the handler saw it.
    private final class Received: Sendable {
        private let arrivals = Mutex<[(message: MQTTMessage, at: ContinuousClock.Instant)]>([])
        func append(_ message: MQTTMessage) {
            let now = ContinuousClock.now
            arrivals.withLock { $0.append((message, now)) }
        }
        var timed: [(message: MQTTMessage, at: ContinuousClock.Instant)] { arrivals.withLock { $0 } }
        var all: [MQTTMessage] { arrivals.withLock { $0.map(\.message) } }
        func removeAll() { arrivals.withLock { $0.removeAll() } }
    }

    private init(client: MQTTClient) {
        self.client = client
        let received = self.received
        client.setMessageHandler { received.append($0) }
    }

    /// Connects a new client to `host`:`port` and subscribes to `filters` (QoS 1).
    public static func start(
        host: String = "127.0.0.1", port: Int, filters: [String], clientID: String? = nil,
        eventLoop: MQTTEventLoop? = nil, timeout: Duration = .seconds(5)
    ) async throws -> MessageCollector {
        let id = clientID ?? "collector-\(UInt32.random(in: 0...UInt32.max))"
        let client = try MQTTClient(
            options: MQTTClientOptions(clientID: id, host: host, port: port), eventLoop: eventLoop)
        let collector = MessageCollector(client: client)
        client.connect()
        for filter in filters {
            try await client.subscribeAndWait(filter, timeout: timeout)
        }
        return collector
    }

    /// Shorthand for a private broker.
    public static func start(
        broker: MosquittoBroker, filters: [String], clientID: String? = nil,
        eventLoop: MQTTEventLoop? = nil
    ) async throws -> MessageCollector {
        try await start(
            host: broker.host, port: broker.port, filters: filters, clientID: clientID,
            eventLoop: eventLoop)
    }

    /// Everything received so far, in arrival order.
    public var messages: [MQTTMessage] { received.all }

    /// Messages received on exactly `topic`.
    public func messages(on topic: String) -> [MQTTMessage] { received.all.filter { $0.topic == topic } }

    /// Messages received on exactly `topic`, each with the moment it arrived here.
    public func timedMessages(on topic: String) -> [(message: MQTTMessage, at: ContinuousClock.Instant)] {
        received.timed.filter { $0.message.topic == topic }
    }

    public func reset() { received.removeAll() }

    /// Waits until at least `count` messages (on `topic`, if given) have arrived, or `timeout`.
    /// Returns the matching messages either way; check the count.
    @discardableResult
    public func waitForMessages(
        count: Int, topic: String? = nil, timeout: Duration = .seconds(5)
    ) async -> [MQTTMessage] {
        let matching = { [received] in received.all.filter { topic == nil || $0.topic == topic } }
        _ = await eventually(timeout: timeout) { matching().count >= count }
        return matching()
    }

    /// Closes the client.
    public func stop() async {
        await client.disconnectAndWait()
        client.close()
    }
}
