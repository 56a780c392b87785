import MQTTTransport
import TestSupport
import Testing

@Suite("Broker down, killed, restarted: the client keeps trying", .serialized)
struct ReconnectTests {
    @Test("Broker down at start: a clear reason, then connected once the broker is up")
    func brokerDownAtStart() async throws {
        let port = try freeLoopbackPort()
        let client = try MQTTClient(options: MQTTClientOptions(clientID: "early-bird", port: port))
        defer { client.close() }
        let states = Collected<[MQTTConnectionState]>([])
        client.setStateHandler { state in states.withLock { $0.append(state) } }
        try client.subscribe("late/#")
        client.connect()

        let refused = MQTTConnectionState.disconnected(reason: "connection refused: 127.0.0.1:\(port)")
        #expect(await eventually { states.snapshot.contains(refused) })
        #expect(await eventually { client.counters.connectAttempts >= 2 })  // it keeps retrying

        let broker = try await startBroker(MosquittoBroker.Configuration(port: port))
        defer { broker.stop() }
        #expect(await client.waitUntilConnected(timeout: .seconds(15)))
        #expect(client.counters.reconnects == 0)  // first successful connection

        // The subscription made while down was sent after CONNACK.
        let publisher = try MQTTClient(options: broker.clientOptions(clientID: "late-pub"))
        defer { publisher.close() }
        let received = Collected<[String]>([])
        client.setMessageHandler { message in received.withLock { $0.append(message.topic) } }
        publisher.connect()
        #expect(await publisher.waitUntilConnected())
        try await Task.sleep(for: .milliseconds(100))
        try await publisher.publishAndWaitForAck(topic: "late/1", payload: [1])
        #expect(await eventually { received.snapshot == ["late/1"] })
    }

    @Test("Broker killed and restarted on the same port: reconnect, subscriptions work again")
    func brokerRestart() async throws {
        try await withBroker { broker in
            let device = try MQTTClient(options: broker.clientOptions(clientID: "survivor"))
            defer { device.close() }
            let received = Collected<[String]>([])
            device.setMessageHandler { message in received.withLock { $0.append(message.payloadText) } }
            try device.subscribe("smart/device/in/survivor")
            device.connect()
            #expect(await device.waitUntilConnected())

            broker.kill()
            #expect(await eventually { !device.state.isConnected })
            guard case .disconnected(let reason) = device.state else {
                Issue.record("state is \(device.state)")
                return
            }
            #expect(reason.contains("127.0.0.1:\(broker.port)"))

            try broker.restart()
            #expect(await device.waitUntilConnected(timeout: .seconds(15)))
            #expect(device.counters.reconnects >= 1)

            let app = try MQTTClient(options: broker.clientOptions(clientID: "app"))
            defer { app.close() }
            app.connect()
            #expect(await app.waitUntilConnected())
            // Publishing until it arrives covers the moment between CONNACK and SUBACK.
            var delivered = false
            for attempt in 0..<50 where !delivered {
                try app.publish(topic: "smart/device/in/survivor", payload: Array("ring \(attempt)".utf8))
                delivered = await eventually(timeout: .milliseconds(100)) { !received.snapshot.isEmpty }
            }
            #expect(delivered)
        }
    }

    @Test("A server that never sends CONNACK: the attempt times out with a reason and is retried")
    func connackTimeout() async throws {
        let silent = try SilentListener()
        var options = MQTTClientOptions(clientID: "patient", port: silent.port)
        options.connectTimeout = 1
        let client = try MQTTClient(options: options)
        defer { client.close() }
        let reasons = Collected<[String]>([])
        client.setStateHandler { state in
            if case .disconnected(let reason) = state { reasons.withLock { $0.append(reason) } }
        }
        client.connect()
        let expected = "no CONNACK within 1.0 s: 127.0.0.1:\(silent.port)"
        #expect(await eventually(timeout: .seconds(6)) { reasons.snapshot.contains(expected) })
        #expect(await eventually(timeout: .seconds(6)) { client.counters.connectAttempts >= 2 })
        #expect(client.counters.connects == 0)
    }

    @Test("disconnect() then connect() at once: the client ends up connected again")
    func disconnectThenConnect() async throws {
        try await withBroker { broker in
            let client = try MQTTClient(options: broker.clientOptions(clientID: "bouncer"))
            defer { client.close() }
            client.connect()
            #expect(await client.waitUntilConnected())
            client.disconnect()
            client.connect()
            #expect(await eventually { client.counters.connects == 2 && client.state.isConnected })
            #expect(await client.disconnectAndWait())
            try await Task.sleep(for: .milliseconds(300))
            #expect(client.state == .disconnected(reason: "disconnected by the client"))
            #expect(client.counters.connects == 2)  // no reconnect after a clean disconnect
        }
    }

    @Test("Reconnect delays double from 0.1 s to 10 s with +-20% jitter")
    func backoffPolicy() {
        let policy = MQTTReconnectPolicy()
        #expect(policy.baseDelay(attempt: 0) == 0.1)
        #expect(policy.baseDelay(attempt: 1) == 0.2)
        #expect(policy.baseDelay(attempt: 3) == 0.8)
        #expect(policy.baseDelay(attempt: 20) == 10)
        #expect(policy.delay(attempt: 0, random: 1) == 0.1 * 1.2)
        #expect(policy.delay(attempt: 0, random: -1) == 0.1 * 0.8)
        for attempt in 0..<30 {
            let delay = policy.delay(attempt: attempt)
            #expect(delay >= policy.baseDelay(attempt: attempt) * 0.8 - 1e-9)
            #expect(delay <= policy.baseDelay(attempt: attempt) * 1.2 + 1e-9)
        }
    }
}
