import MQTTTransport
import TestSupport
import Testing

@Suite("MQTT round trips against a real mosquitto", .serialized)
struct RoundTripTests {
    @Test("QoS 1 publish reaches a subscriber, bytes intact")
    func qos1RoundTrip() async throws {
        try await withBroker { broker in
            let collector = try await MessageCollector.start(broker: broker, filters: ["t/in/#"])
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "pub-1"))
            defer { publisher.close() }
            let states = Collected<[MQTTConnectionState]>([])
            publisher.setStateHandler { state in states.withLock { $0.append(state) } }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            let payload: [UInt8] = Array(0...255) + Array("{\"protocol\":308}".utf8)
            try await publisher.publishAndWaitForAck(topic: "t/in/dev1", payload: payload)
            let received = await collector.waitForMessages(count: 1, topic: "t/in/dev1")
            #expect(received.count == 1)
            #expect(received.first?.payload == payload)
            #expect(received.first?.qos == 1)
            #expect(received.first?.retain == false)
            #expect(publisher.counters.messagesOut == 1)
            #expect(publisher.counters.messagesAcknowledged == 1)
            #expect(collector.client.counters.messagesIn == 1)
            #expect(states.snapshot.prefix(2) == [.connecting, .connected])
            await collector.stop()
        }
    }
}
