import MQTTTransport
import Synchronization
import TestSupport
import Testing

@Suite("MQTTInbox: pulled by its consumer, no task while nothing waits")
struct InboxTests {
    private static func message(_ n: Int) -> MQTTInbound {
        .message(MQTTMessage(topic: "t/\(n)", payload: [UInt8(n & 0xFF)], qos: 1, retain: false))
    }

    private static func topics(_ items: [MQTTInbound]) -> [String] {
        items.compactMap { if case .message(let m) = $0 { m.topic } else { nil } }
    }

    @Test("The first item wakes the consumer once; the next wake comes only after take() found it empty")
    func wakesOncePerDrain() {
        let wakes = Mutex(0)
        let inbox = MQTTInbox(limit: 10) { wakes.withLock { $0 += 1 } }
        #expect(inbox.push(Self.message(1)) == .woke)
        #expect(inbox.push(Self.message(2)) == .queued)
        #expect(wakes.withLock { $0 } == 1)
        #expect(Self.topics(inbox.take()) == ["t/1", "t/2"])
        // Still draining until take() comes back empty: a push now needs no wake.
        #expect(inbox.push(Self.message(3)) == .queued)
        #expect(Self.topics(inbox.take()) == ["t/3"])
        #expect(inbox.take().isEmpty)
        #expect(inbox.push(Self.message(4)) == .woke)
        #expect(wakes.withLock { $0 } == 2)
    }

    @Test("Past the limit of waiting items, newer ones are dropped; taken items free their places")
    func bounded() {
        let inbox = MQTTInbox(limit: 3) {}
        let outcomes = (1...5).map { inbox.push(Self.message($0)) }
        #expect(outcomes == [.woke, .queued, .queued, .dropped, .dropped])
        #expect(inbox.waiting == 3)
        #expect(Self.topics(inbox.take()) == ["t/1", "t/2", "t/3"])
        #expect(inbox.push(Self.message(6)) == .queued)
    }

    @Test("finish() drops what waits and every later push")
    func finish() {
        let inbox = MQTTInbox(limit: 3) {}
        inbox.push(Self.message(1))
        inbox.finish()
        #expect(inbox.take().isEmpty)
        #expect(inbox.push(Self.message(2)) == .dropped)
        #expect(inbox.waiting == 0)
    }

    @Test("A client's inbox gets its states and messages in order; close() finishes it")
    func clientInOrder() async throws {
        try await withBroker { broker in
            let (wakes, wake) = AsyncStream<Void>.makeStream()
            let client = try MQTTClient(options: broker.clientOptions(clientID: "inbox-reader"))
            let inbox = client.makeInbox(limit: 1024) { wake.yield() }
            client.connect()
            #expect(await client.waitUntilConnected())
            try await client.subscribeAndWait("inbox/#", qos: 1)
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "inbox-writer"))
            defer { publisher.close() }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            for n in 0..<50 { try publisher.publish(topic: "inbox/\(n)", payload: [UInt8(n)]) }

            var items: [MQTTInbound] = []
            for await _ in wakes {
                while true {
                    let taken = inbox.take()
                    if taken.isEmpty { break }
                    items += taken
                }
                if Self.topics(items).count >= 50 { break }
            }
            #expect(Self.topics(items) == (0..<50).map { "inbox/\($0)" })
            let states = items.compactMap { if case .state(let s) = $0 { s } else { nil } }
            // `.connecting` is not delivered to an inbox (its owner acts only on the other two).
            #expect(states == [.connected])
            client.close()
            #expect(await eventually { inbox.push(Self.message(0)) == .dropped })
        }
    }

    @Test("Items past the inbox's limit are counted as droppedInbound by the client")
    func clientCountsDrops() async throws {
        try await withBroker { broker in
            let client = try MQTTClient(options: broker.clientOptions(clientID: "inbox-full"))
            defer { client.close() }
            // Nobody drains: the `.connected` state and four messages fill it.
            let inbox = client.makeInbox(limit: 5) {}
            client.connect()
            #expect(await client.waitUntilConnected())
            try await client.subscribeAndWait("full/#", qos: 1)
            let publisher = try MQTTClient(options: broker.clientOptions(clientID: "inbox-filler"))
            defer { publisher.close() }
            publisher.connect()
            #expect(await publisher.waitUntilConnected())
            for n in 0..<20 { try publisher.publish(topic: "full/\(n)", payload: [UInt8(n)]) }
            #expect(await eventually { client.counters.messagesIn == 20 })
            #expect(client.counters.droppedInbound == 16)
            #expect(inbox.waiting == 5)
        }
    }
}
