import MQTTTransport
import Synchronization
import TestSupport
import Testing

@Suite("MQTTPresence: published by the loop thread at the SUBACK, before the owner hears .connected")
struct PresenceTests {
    /// The inbox's items so far (drained without a consumer task: the test takes them).
    private static func states(_ items: [MQTTInbound]) -> [MQTTConnectionState] {
        items.compactMap { if case .state(let s) = $0 { s } else { nil } }
    }

    @Test("The presence goes out at each connection's SUBACK, then .connected; a watcher that answers it reaches the subscribed client; cleared, it stops")
    func presenceAtSuback() async throws {
        try await withBroker { broker in
            let seen = Collected<[MQTTMessage]>([])
            let watcher = try MQTTClient(options: broker.clientOptions(clientID: "presence-watcher"))
            defer { watcher.close() }
            // Whoever sees the presence calls the client at once: it must already be subscribed.
            watcher.setMessageHandler { message in
                seen.withLock { $0.append(message) }
                if message.topic == "presence/dev/online" {
                    try? watcher.publish(topic: "presence-in/dev", payload: message.payload)
                }
            }
            watcher.connect()
            #expect(await watcher.waitUntilConnected())
            try await watcher.subscribeAndWait("presence/#", qos: 1)

            let client = try MQTTClient(options: broker.clientOptions(clientID: "presence-dev"))
            defer { client.close() }
            let items = Collected<[MQTTInbound]>([])
            let inboxBox = Mutex<MQTTInbox?>(nil)
            let inbox = client.makeInbox(limit: 64) {
                // The test drains on the waking thread: take until empty.
                guard let inbox = inboxBox.withLock({ $0 }) else { return }
                while true {
                    let taken = inbox.take()
                    if taken.isEmpty { break }
                    items.withLock { $0 += taken }
                }
            }
            inboxBox.withLock { $0 = inbox }
            let connects = Mutex(0)
            #expect(client.setPresence(MQTTPresence {
                let n = connects.withLock { n -> Int in
                    n += 1
                    return n
                }
                return [MQTTMessage(topic: "presence/dev/meta", payload: Array("meta \(n)".utf8), qos: 1, retain: true),
                        MQTTMessage(topic: "presence/dev/online", payload: Array("online \(n)".utf8), qos: 1, retain: true)]
            }))
            try client.subscribe("presence-in/dev", qos: 1)
            client.connect()

            // The watcher's answer to the online status arrives: the client was subscribed.
            func answers() -> [String] {
                items.snapshot.compactMap { item -> String? in
                    guard case .message(let m) = item else { return nil }
                    return String(decoding: m.payload, as: UTF8.self)
                }
            }
            #expect(await eventually { answers() == ["online 1"] })
            #expect(seen.snapshot.map(\.topic) == ["presence/dev/meta", "presence/dev/online"])
            // `.connected` came after the presence was out (before the answer), `.connecting` not at all.
            #expect(Self.states(items.snapshot) == [.connected])
            if case .state = items.snapshot.first {} else { Issue.record("the answer came before .connected") }

            // Every reconnect publishes it again.
            client.disconnectAbruptly(reconnect: true)
            #expect(await eventually { answers() == ["online 1", "online 2"] })
            #expect(Self.states(items.snapshot).filter { $0 == .connected }.count == 2)

            // Cleared: it went out on this connection (true), and the next connection sends none.
            #expect(client.clearPresence())
            client.disconnectAbruptly(reconnect: true)
            #expect(await eventually { Self.states(items.snapshot).filter { $0 == .connected }.count == 3 })
            #expect(client.clearPresence() == false)
            #expect(connects.withLock { $0 } == 2)
        }
    }
}
