@testable import MQTTTransport
import TestSupport
import Testing

/// Waits (connection, SUBACK, PUBACK, disconnect) time out on the client's loop thread, with no
/// task or sleep per wait, and leave nothing behind (docs/fleet.md "Memory per device").
@Suite("Waits: timeouts on the loop thread, nothing left behind")
struct WaitTests {
    // The limit: a loop that does not take the next deadline after one fired would leave the
    // middle wait hanging.
    @Test("No broker: each wait ends at its deadline with what it waited for", .timeLimit(.minutes(1)))
    func timeoutsWithoutBroker() async throws {
        let port = try freeLoopbackPort()
        let client = try MQTTClient(options: MQTTClientOptions(clientID: "nobody-home", port: port))
        defer { client.close() }
        client.connect()

        let clock = ContinuousClock()
        let began = clock.now
        #expect(await client.waitUntilConnected(timeout: .milliseconds(200)) == false)
        #expect(clock.now - began >= .milliseconds(200))

        await #expect(throws: MQTTError.timedOut("SUBACK for wait/in")) {
            try await client.subscribeAndWait("wait/in", timeout: .milliseconds(150))
        }
        // QoS 1 while disconnected is queued by libmosquitto: its PUBACK never comes.
        await #expect(throws: MQTTError.timedOut("PUBACK for wait/out")) {
            try await client.publishAndWaitForAck(topic: "wait/out", payload: [1], timeout: .milliseconds(150))
        }
        // Several waits at once, the latest deadline first: each ends at its own. The short one
        // does not wait for a later deadline: when it returns, the long one is still in the waiter
        // table (the loop thread removes a waiter as it times it out, so this holds however late
        // the test's task resumes, up to the long one's 30 s: a parallel swift test on 2 cores has
        // been seen to resume a task 8 s late). The middle one ends at its own deadline after the
        // short one fired (the loop took the next deadline), and the long one alone is left.
        // Closing the client then ends the long one (a 30 s wait proves nothing more).
        func waiting() -> Int { client.connection.mutex.withLock { _ in client.connection.waiters?.waiting.count ?? 0 } }
        let started = clock.now
        async let long = client.waitUntilConnected(timeout: .seconds(30))
        async let middle = client.waitUntilConnected(timeout: .seconds(1))
        async let short = client.waitUntilConnected(timeout: .milliseconds(100))
        #expect(await short == false)
        #expect(clock.now - started < .seconds(30))
        #expect(waiting() >= 1, "the short wait ended with the long one's deadline, not its own")
        #expect(await middle == false)
        #expect(clock.now - started >= .seconds(1))
        #expect(waiting() == 1, "the short and middle waits ended; only the long one should be left")
        client.close()
        #expect(await long == false)
        #expect(clock.now - started < .seconds(30))
        #expect(client.connection.mutex.withLock { _ in client.connection.waiters == nil })
    }

    @Test("Answered waits leave no waiter table; a subscribe while its SUBSCRIBE is unanswered sends none")
    func answeredWaitsLeaveNothing() async throws {
        try await withBroker { broker in
            let client = try MQTTClient(options: broker.clientOptions(clientID: "tidy"))
            defer { client.close() }
            try client.subscribe("tidy/in")
            client.connect()
            #expect(await client.waitUntilConnected())
            // The reconnect's own SUBSCRIBE of tidy/in may still be unanswered: this wait joins it.
            try await client.subscribeAndWait("tidy/in")
            try await client.publishAndWaitForAck(topic: "tidy/out", payload: [1])
            #expect(client.connection.mutex.withLock { _ in client.connection.waiters == nil })
            #expect(await client.disconnectAndWait())
            #expect(client.connection.mutex.withLock { _ in client.connection.waiters == nil })
        }
    }

    @Test("Clients with equal options share one settings object; their options read back whole")
    func sharedSettings() throws {
        func options(_ id: String) -> MQTTClientOptions {
            MQTTClientOptions(
                clientID: id, port: 1, username: id, password: "secret-\(id)",
                will: MQTTWill(topic: "meta/\(id)/online", payload: Array(#"{"online":false}"#.utf8), retain: true))
        }
        let loop = try MQTTEventLoop(threads: 1, name: "settings")
        defer { loop.shutdown() }
        let a = try MQTTClient(options: options("a"), eventLoop: loop)
        let b = try MQTTClient(options: options("b"), eventLoop: loop)
        var other = options("c")
        other.keepAlive = 5
        let c = try MQTTClient(options: other, eventLoop: loop)
        defer { [a, b, c].forEach { $0.close() } }
        #expect(a.connection.settings === b.connection.settings)
        #expect(a.connection.settings !== c.connection.settings)
        #expect(a.options == options("a"))
        #expect(b.options == options("b"))
        #expect(c.options == other)
    }

    @Test("The subscription list keeps order, updates QoS in place and forgets a removed filter")
    func subscriptionList() {
        var list = SubscriptionList()
        #expect(list.entries.isEmpty)
        list.set("a", qos: 1)
        list.set("b", qos: 0)
        list.set("c", qos: 1)
        list.set("a", qos: 2)
        #expect(list.entries.map(\.filter) == ["a", "b", "c"])
        #expect(list.qos(of: "a") == 2)
        #expect(list.qos(of: "z") == nil)
        list.remove("a")
        #expect(list.entries.map(\.filter) == ["b", "c"])
        list.remove("c")
        list.remove("b")
        #expect(list.entries.isEmpty)
        list.set("d", qos: 1)
        var seen: [String] = []
        list.forEach { seen.append($0.filter) }
        #expect(seen == ["d"])
    }
}
