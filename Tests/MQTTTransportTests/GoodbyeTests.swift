import Foundation
import MQTTTransport
import TestSupport
import Testing

/// `publishThenDisconnect` / `beginGoodbye`: a device's last retained status, then DISCONNECT at
/// its PUBACK from the loop thread (docs/fleet.md "SIGTERM").
@Suite("Goodbye: the last message, then DISCONNECT at its PUBACK", .serialized)
struct GoodbyeTests {
    static let statusTopic = "smart/device/meta/bye1/online"
    static let will = "{\"online\":false}"

    private func deviceOptions(_ broker: MosquittoBroker) -> MQTTClientOptions {
        var options = broker.clientOptions(clientID: "bye1")
        options.will = MQTTWill(topic: Self.statusTopic, payload: Array(Self.will.utf8), qos: 1, retain: true)
        return options
    }

    private func goodbye(_ text: String) -> MQTTMessage {
        MQTTMessage(topic: Self.statusTopic, payload: Array(text.utf8), qos: 1, retain: true)
    }

    /// What a fresh subscriber finds retained on the status topic.
    private func retainedStatus(_ broker: MosquittoBroker) async throws -> [String] {
        let fresh = try await MessageCollector.start(broker: broker, filters: [Self.statusTopic])
        let found = await fresh.waitForMessages(count: 1, topic: Self.statusTopic, timeout: .seconds(3))
        await fresh.stop()
        return found.map(\.payloadText)
    }

    @Test("publishThenDisconnect: the message is acknowledged while the connection is open, the disconnect is clean (no will), the message stays retained")
    func goodbyeIsAcknowledgedThenClean() async throws {
        try await withBroker { broker in
            let watcher = try await MessageCollector.start(broker: broker, filters: [Self.statusTopic, "bye-sentinel"])
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            let acknowledged = device.counters.messagesAcknowledged

            #expect(await device.publishThenDisconnect(goodbye("bye 1"), acknowledgement: .seconds(5), close: .seconds(2)))
            // The PUBACK came on the open connection: DISCONNECT went after it, not before.
            #expect(device.counters.messagesAcknowledged == acknowledged + 1)
            #expect(device.state == .disconnected(reason: "disconnected by the client"))
            try await Task.sleep(for: .milliseconds(300))
            #expect(device.counters.connectAttempts == 1, "no reconnect after a goodbye")

            // The watcher saw the goodbye and no will; a fresh subscriber finds it retained.
            let sentinel = try MQTTClient(options: broker.clientOptions(clientID: "bye-sentinel"))
            defer { sentinel.close() }
            sentinel.connect()
            #expect(await sentinel.waitUntilConnected())
            try await sentinel.publishAndWaitForAck(topic: "bye-sentinel", payload: [1])
            #expect(await watcher.waitForMessages(count: 1, topic: "bye-sentinel").count == 1)
            #expect(watcher.messages(on: Self.statusTopic).map(\.payloadText) == ["bye 1"])
            #expect(try await retainedStatus(broker) == ["bye 1"])
            await watcher.stop()
        }
    }

    @Test("beginGoodbye waits for nothing; waitUntilClosed then returns once the socket is closed, and at once after")
    func beginThenWait() async throws {
        try await withBroker { broker in
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            device.beginGoodbye(goodbye("bye 2"), acknowledgement: .seconds(5))
            #expect(await device.waitUntilClosed(timeout: .seconds(5)))
            #expect(device.state == .disconnected(reason: "disconnected by the client"))
            let clock = ContinuousClock()
            let began = clock.now
            #expect(await device.waitUntilClosed(timeout: .seconds(5)))
            #expect(clock.now - began < .seconds(1))
            #expect(try await retainedStatus(broker) == ["bye 2"])
        }
    }

    @Test("Not connected: beginGoodbye publishes nothing on the wire and the wait returns at once")
    func goodbyeWithoutConnection() async throws {
        try await withBroker { broker in
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.beginGoodbye(goodbye("never"), acknowledgement: .seconds(5))
            #expect(await device.waitUntilClosed(timeout: .seconds(5)))
            try await Task.sleep(for: .milliseconds(200))
            #expect(device.counters.connectAttempts == 0)
            #expect(try await retainedStatus(broker).isEmpty)
        }
    }

    @Test("A broker that does not answer (stopped): DISCONNECT goes after the acknowledgement timeout; resumed, the broker stores the message and publishes no will")
    func goodbyeWithoutPuback() async throws {
        try await withBroker { broker in
            let watcher = try await MessageCollector.start(broker: broker, filters: [Self.statusTopic])
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            let acknowledged = device.counters.messagesAcknowledged
            let pid = try #require(broker.pid)
            kill(pid, SIGSTOP)
            let clock = ContinuousClock()
            let began = clock.now
            // The loop learns the PUBACK deadline at its next once-a-second pass at the latest.
            let closed = await device.publishThenDisconnect(goodbye("bye 3"), acknowledgement: .milliseconds(300),
                                                            close: .seconds(3))
            let took = clock.now - began
            kill(pid, SIGCONT)
            #expect(closed)
            #expect(took >= .milliseconds(300) && took < .seconds(3), "\(took)")
            #expect(device.counters.messagesAcknowledged == acknowledged)
            #expect(await watcher.waitForMessages(count: 1, topic: Self.statusTopic).map(\.payloadText) == ["bye 3"])
            try await Task.sleep(for: .milliseconds(300))
            #expect(watcher.messages(on: Self.statusTopic).map(\.payloadText) == ["bye 3"], "no will after it")
            #expect(try await retainedStatus(broker) == ["bye 3"])
            await watcher.stop()
        }
    }
}
