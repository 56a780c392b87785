import MQTTTransport
import TestSupport
import Testing

/// Keepalive as libmosquitto does it (docs/mqtt.md): a PINGREQ once `keepAlive` seconds passed
/// since the last packet out or in (whole seconds, so 4-5 s after it), the connection dropped
/// when the PINGRESP has not come `keepAlive` seconds after the PINGREQ. The client's loop runs
/// the check from a deadline in its heap (ClientConnection+SocketTimer.swift), not in a pass over
/// every client: without that deadline no PINGREQ goes out at all.
@Suite("Keepalive: PINGREQ on an idle connection, and the PINGRESP's deadline")
struct KeepaliveTests {
    static let keepAlive = 5.0
    /// How late a check may come on a loaded machine (a parallel test run).
    static let lateness = 2.5

    @Test("An idle connection with keepalive 5 s sends a PINGREQ every 5 s and stays up")
    func pingsOnIdleConnection() async throws {
        let broker = try ScriptedMQTTBroker(answersPings: true)
        defer { broker.stop() }
        let options = MQTTClientOptions(clientID: "idle", port: broker.port, keepAlive: Int(Self.keepAlive))
        let client = try MQTTClient(options: options)
        defer { client.close() }
        client.connect()
        #expect(await client.waitUntilConnected())
        #expect(await eventually(timeout: .seconds(20)) { broker.pingRequests.count >= 2 })
        let pings = broker.pingRequests
        let connack = try #require(broker.connackSentAt)
        try #require(pings.count >= 2)
        let intervals = [pings[0] - connack, pings[1] - pings[0]]
        for interval in intervals {
            #expect(interval >= Self.keepAlive - 1 && interval <= Self.keepAlive + Self.lateness,
                    "PINGREQ \(interval) s after the packet before it")
        }
        #expect(client.state.isConnected)
        #expect(broker.closedAt == nil)
    }

    @Test("No PINGRESP: the connection is dropped keepalive seconds after the PINGREQ")
    func noPingResponse() async throws {
        let broker = try ScriptedMQTTBroker(answersPings: false)
        defer { broker.stop() }
        let options = MQTTClientOptions(clientID: "unanswered", port: broker.port, keepAlive: Int(Self.keepAlive))
        let client = try MQTTClient(options: options)
        defer { client.close() }
        let reasons = Collected<[String]>([])
        client.setStateHandler { state in
            if case .disconnected(let reason) = state { reasons.withLock { $0.append(reason) } }
        }
        client.connect()
        #expect(await client.waitUntilConnected())
        let expected = "keepalive timeout (no PINGRESP): 127.0.0.1:\(broker.port)"
        #expect(await eventually(timeout: .seconds(25)) { reasons.snapshot.contains(expected) })
        #expect(await eventually { broker.closedAt != nil })
        let pings = broker.pingRequests
        #expect(pings.count == 1)
        let closed = try #require(broker.closedAt)
        let ping = try #require(pings.first)
        let afterPing = closed - ping
        #expect(afterPing >= Self.keepAlive - 1 && afterPing <= Self.keepAlive + Self.lateness,
                "closed \(afterPing) s after the PINGREQ")
    }
}
