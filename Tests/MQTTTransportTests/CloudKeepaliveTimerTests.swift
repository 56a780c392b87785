@testable import MQTTTransport
import TestSupport
import Testing

/// PROTOCOL.md 9: the cloud connection's keepalive is 120 s. The CONNECT says so, and the
/// socket's own timer (ClientConnection+SocketTimer.swift) takes the first keepalive check 120 s
/// after the CONNACK, not earlier (a visit a second would be the old pass over every client) and
/// not later (libmosquitto's PINGREQ would come late and the cloud would drop the device).
@Suite("Keepalive 120 s: the CONNECT and the socket's first keepalive check")
struct CloudKeepaliveTimerTests {
    @Test("keepalive 120: CONNECT carries 120 and the first check is due 120 s after the CONNACK")
    func firstCheckAfterTheCloudsKeepalive() async throws {
        let broker = try ScriptedMQTTBroker(answersPings: true)
        defer { broker.stop() }
        let client = try MQTTClient(options: MQTTClientOptions(clientID: "cloud-keepalive", port: broker.port, keepAlive: 120))
        defer { client.close() }
        client.connect()
        #expect(await client.waitUntilConnected())
        let connect = try #require(broker.received.first { $0.type == ScriptedMQTTBroker.PacketType.connect.rawValue })
        #expect(connect.connectKeepAlive == 120)
        let connack = try #require(broker.connackSentAt)
        // The CONNACK's callback sets the timer with `acknowledged`, before the state is connected.
        let attempt = try #require(client.connection.mutex.withLock { _ in client.connection.lifecycle.attempt })
        #expect(attempt.acknowledged)
        let deadline = try #require(attempt.deadline)
        let after = deadline - connack
        // The CONNACK is read after the broker sent it; a loaded machine delays that by seconds.
        #expect(after >= 119.5 && after <= 125, "first keepalive check \(after) s after the CONNACK")
    }
}
