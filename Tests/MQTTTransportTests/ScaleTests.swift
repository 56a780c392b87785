import MQTTTransport
import TestSupport
import Testing

@Suite("Many clients on one event loop", .serialized, .heavy)
struct ScaleTests {
    @Test("250 clients on a 2-thread loop each send and receive one message; threads stay few")
    func manyClientsFewThreads() async throws {
        try await withBroker { broker in
            let loop = try MQTTEventLoop(threads: 2, name: "mqtt-fleet")
            defer { loop.shutdown() }
            let count = 250
            let inboxes = (0..<count).map { _ in Collected<[String]>([]) }
            var clients: [MQTTClient] = []
            for index in 0..<count {
                let client = try MQTTClient(
                    options: broker.clientOptions(clientID: "fleet-\(index)"), eventLoop: loop)
                let inbox = inboxes[index]
                client.setMessageHandler { message in inbox.withLock { $0.append(message.payloadText) } }
                try client.subscribe("fleet/\(index)")
                client.connect()
                clients.append(client)
            }
            defer { for client in clients { client.close() } }

            #expect(await eventually(timeout: .seconds(30)) { clients.allSatisfy { $0.state.isConnected } })
            // Every client subscribed to its own topic: wait for all SUBACKs.
            for (index, client) in clients.enumerated() {
                try await client.subscribeAndWait("fleet/\(index)", timeout: .seconds(10))
            }
            for (index, client) in clients.enumerated() {
                try client.publish(topic: "fleet/\((index + 1) % count)", payload: Array("from \(index)".utf8))
            }
            let allArrived = await eventually(timeout: .seconds(30)) {
                inboxes.allSatisfy { $0.snapshot.count == 1 }
            }
            #expect(allArrived)
            for index in 0..<count {
                #expect(inboxes[index].snapshot == ["from \((index + count - 1) % count)"])
            }
            #expect(loop.clientCount == count)
            // The loop's own threads (named after it) are all 250 clients use. The process-wide
            // count is not measured: suites running in parallel start and stop threads of their own.
            #expect(loop.threadCount == 2)
            #expect(currentThreadNames().filter { $0.hasPrefix("mqtt-fleet") }.count == 2)
        }
    }

    @Test("Every client gives libmosquitto's socketpair back: one descriptor per client, and it still works")
    func oneDescriptorPerClient() async throws {
        // Debian 12's libmosquitto 2.0.11 (what this project runs on) has the pair where it is checked for.
        #expect(MosquittoSocketpair.releasable)
        #expect(DescriptorBudget.perClient == 1)
        #expect(DescriptorBudget.needed(clients: 1000, reserve: 256) == 1256)
        try await withBroker { broker in
            let client = try MQTTClient(options: broker.clientOptions(clientID: "one-fd"))
            defer { client.close() }
            let inbox = Collected<[String]>([])
            client.setMessageHandler { message in inbox.withLock { $0.append(message.payloadText) } }
            client.connect()
            #expect(await client.waitUntilConnected())
            try await client.subscribeAndWait("one-fd/echo", timeout: .seconds(10))
            // Many queued packets at once (libmosquitto would have written a byte to the pair for each).
            for i in 0..<200 { try client.publish(topic: "one-fd/echo", payload: Array("m\(i)".utf8), qos: 1) }
            #expect(await eventually(timeout: .seconds(20)) { inbox.snapshot.count == 200 })
            #expect(inbox.snapshot.first == "m0" && inbox.snapshot.last == "m199")
        }
    }

    @Test("A client keeps its own event loop alive; the loop stops after the client is gone")
    func clientKeepsItsLoop() async throws {
        try await withBroker { broker in
            var client: MQTTClient? = try MQTTClient(
                options: broker.clientOptions(clientID: "own-loop"),
                eventLoop: MQTTEventLoop(threads: 1, name: "mqtt-own"))
            client?.connect()
            #expect(await client?.waitUntilConnected() == true)
            #expect(currentThreadNames().contains("mqtt-own-0"))
            client = nil
            #expect(await eventually { !currentThreadNames().contains("mqtt-own-0") })
        }
    }
}
