import MQTTTransport
import TestSupport
import Testing

@Suite("Publish and subscribe against a real mosquitto", .serialized)
struct RoundTripTests {
    @Test("QoS 1 publish reaches a subscriber with its bytes intact", arguments: [MQTTProtocolVersion.v311, .v5])
    func qos1RoundTrip(version: MQTTProtocolVersion) async throws {
        try await withBroker { broker in
            let collector = try await MessageCollector.start(broker: broker, filters: ["t/in/#"])
            var options = broker.clientOptions(clientID: "pub-1")
            options.protocolVersion = version
            let publisher = try MQTTClient(options: options)
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

    @Test("A retained message is delivered, flagged retained, to a later subscriber")
    func retainedMessage() async throws {
        try await withBroker { broker in
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "meta-pub"))
            defer { publisher.close() }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            let meta = Array("{\"online\":true,\"t\":1732200000}".utf8)
            try await publisher.publishAndWaitForAck(
                topic: "smart/device/meta/dev1/online", payload: meta, retain: true)

            let late = try await MessageCollector.start(broker: broker, filters: ["smart/device/meta/#"])
            let received = await late.waitForMessages(count: 1)
            #expect(received.map(\.payload) == [meta])
            #expect(received.first?.retain == true)
            await late.stop()
        }
    }

    @Test("QoS 1 published before connecting is queued and sent after CONNACK")
    func publishWhileDisconnectedIsQueued() async throws {
        try await withBroker { broker in
            let collector = try await MessageCollector.start(broker: broker, filters: ["queued/#"])
            let client = try MQTTClient(options: broker.clientOptions(clientID: "early"))
            defer { client.close() }
            try client.publish(topic: "queued/1", payload: Array("early".utf8))
            #expect(throws: MQTTError.self) {
                try client.publish(topic: "queued/0", payload: [0], qos: 0)
            }
            client.connect()
            let received = await collector.waitForMessages(count: 1, topic: "queued/1")
            #expect(received.map(\.payloadText) == ["early"])
            await collector.stop()
        }
    }

    @Test("An inbound payload over 64 KiB is dropped and counted; smaller ones still arrive")
    func oversizedPayloadIsDropped() async throws {
        try await withBroker { broker in
            let collector = try await MessageCollector.start(broker: broker, filters: ["big/#"])
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "big-pub"))
            defer { publisher.close() }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            try await publisher.publishAndWaitForAck(
                topic: "big/1", payload: [UInt8](repeating: 7, count: 64 * 1024 + 1))
            try await publisher.publishAndWaitForAck(topic: "big/2", payload: [1, 2, 3])
            let received = await collector.waitForMessages(count: 1, topic: "big/2")
            #expect(received.count == 1)
            #expect(collector.messages(on: "big/1").isEmpty)
            #expect(collector.client.counters.droppedOversize == 1)
            await collector.stop()
        }
    }

    @Test("Publishing from four tasks at once on one client: every message arrives once")
    func concurrentPublishers() async throws {
        try await withBroker { broker in
            let collector = try await MessageCollector.start(broker: broker, filters: ["burst/#"])
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "burst-pub"))
            defer { publisher.close() }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for index in 0..<250 {
                            try publisher.publish(topic: "burst/\(worker)", payload: Array("\(worker)-\(index)".utf8))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let received = await collector.waitForMessages(count: 1000, timeout: .seconds(20))
            #expect(received.count == 1000)
            #expect(Set(received.map(\.payloadText)).count == 1000)
            for worker in 0..<4 {  // per publisher task, order is kept
                let own = collector.messages(on: "burst/\(worker)").map(\.payloadText)
                #expect(own == (0..<250).map { "\(worker)-\($0)" })
            }
            #expect(await eventually { publisher.counters.messagesAcknowledged == 1000 })
            await collector.stop()
        }
    }

    @Test("makeMessageStream and makeStateStream deliver in order to an async consumer")
    func streams() async throws {
        try await withBroker { broker in
            let device = try MQTTClient(options: broker.clientOptions(clientID: "stream-dev"))
            defer { device.close() }
            let messages = device.makeMessageStream()
            let states = device.makeStateStream()
            try device.subscribe("smart/device/in/stream-dev")
            device.connect()
            var stateIterator = states.makeAsyncIterator()
            #expect(await stateIterator.next() == .connecting)
            #expect(await stateIterator.next() == .connected)
            let app = try MQTTClient(options: broker.clientOptions(clientID: "stream-app"))
            defer { app.close() }
            app.connect()
            #expect(await app.waitUntilConnected())
            try await device.subscribeAndWait("smart/device/in/stream-dev")
            for index in 0..<20 {
                try app.publish(topic: "smart/device/in/stream-dev", payload: Array("\(index)".utf8))
            }
            var received: [String] = []
            for await message in messages {
                received.append(message.payloadText)
                if received.count == 20 { break }
            }
            #expect(received == (0..<20).map { "\($0)" })
            device.close()
            var rest: [MQTTConnectionState] = []
            for await state in states { rest.append(state) }  // ends: close() finishes it
            #expect(rest.last == .disconnected(reason: "closed"))
        }
    }

    @Test("Invalid topics and QoS are refused with typed errors")
    func invalidArguments() async throws {
        let loop = try MQTTEventLoop(threads: 1, name: "mqtt-args")
        defer { loop.shutdown() }
        let client = try MQTTClient(options: MQTTClientOptions(clientID: "args"), eventLoop: loop)
        defer { client.close() }
        #expect(throws: MQTTError.invalidTopic("a/+/b")) {
            try client.publish(topic: "a/+/b", payload: [])
        }
        #expect(throws: MQTTError.invalidTopic("a/#/b")) { try client.subscribe("a/#/b") }
        #expect(throws: MQTTError.self) { try client.publish(topic: "a", payload: [], qos: 3) }
    }

    @Test("Publish to receive round trip on loopback (printed, not asserted)")
    func latency() async throws {
        try await withBroker { broker in
            let loop = try MQTTEventLoop(threads: 1, name: "mqtt-latency")
            defer { loop.shutdown() }
            let arrivals = AsyncStream<ContinuousClock.Instant>.makeStream()
            let receiver = try MQTTClient(options: broker.clientOptions(clientID: "lat-rx"), eventLoop: loop)
            let sender = try MQTTClient(options: broker.clientOptions(clientID: "lat-tx"), eventLoop: loop)
            defer {
                receiver.close()
                sender.close()
            }
            receiver.setMessageHandler { _ in arrivals.continuation.yield(ContinuousClock.now) }
            receiver.connect()
            sender.connect()
            try await receiver.subscribeAndWait("lat/x")
            #expect(await sender.waitUntilConnected())
            var iterator = arrivals.stream.makeAsyncIterator()
            var samples: [Duration] = []
            for index in 0..<200 {
                let sent = ContinuousClock.now
                try sender.publish(topic: "lat/x", payload: Array("\(index)".utf8))
                guard let arrived = await iterator.next() else { break }
                samples.append(arrived - sent)
            }
            #expect(samples.count == 200)
            let sorted = samples.sorted()
            if !sorted.isEmpty {
                let median = sorted[sorted.count / 2]
                let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
                print("MQTT loopback publish->receive over \(sorted.count) messages: median \(median), p99 \(p99)")
            }
        }
    }
}
