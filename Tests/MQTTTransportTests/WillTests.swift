import Foundation
import MQTTTransport
import TestSupport
import Testing

@Suite("Last will: abrupt versus clean disconnect", .serialized)
struct WillTests {
    static let willTopic = "smart/device/meta/dev1/online"

    private func deviceOptions(_ broker: MosquittoBroker) -> MQTTClientOptions {
        var options = broker.clientOptions(clientID: "dev1")
        options.will = MQTTWill(topic: Self.willTopic, payload: Array("{\"online\":false}".utf8), qos: 1)
        return options
    }

    @Test("disconnectAbruptly(): the broker publishes the will; the connection ends with a reset (no TIME_WAIT left); the client stays down")
    func abruptDisconnectPublishesWill() async throws {
        try await withBroker { broker in
            let watcher = try await MessageCollector.start(broker: broker, filters: [Self.willTopic])
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            // The broker's start-up probe may have left one of its own; the drop must add none.
            let before = Self.timeWaitSockets(towardsPort: broker.port)
            device.disconnectAbruptly()
            // The reset still counts as a lost connection: the broker publishes the will.
            let wills = await watcher.waitForMessages(count: 1, topic: Self.willTopic)
            #expect(wills.map(\.payloadText) == ["{\"online\":false}"])
            #expect(await eventually { !device.state.isConnected })
            // An orderly close (FIN first from the client) would leave the client's end in
            // TIME_WAIT for a minute; a reset leaves nothing (docs/fleet.md "Reconnect storms").
            #expect(Self.timeWaitSockets(towardsPort: broker.port) == before)
            guard case .disconnected(let reason) = device.state else {
                Issue.record("state is \(device.state)")
                return
            }
            #expect(reason.contains("disconnectAbruptly"))
            try await Task.sleep(for: .milliseconds(300))
            #expect(device.counters.connectAttempts == 1)  // no reconnect without reconnect: true
            await watcher.stop()
        }
    }

    /// Sockets in TIME_WAIT (state 06 of /proc/net/tcp) whose remote port is `port`.
    static func timeWaitSockets(towardsPort port: Int) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return -1 }
        let remote = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "06"
        }.count
    }

    @Test("disconnectAbruptly(reconnect: true): will published, then the client is back")
    func abruptDisconnectThenReconnect() async throws {
        try await withBroker { broker in
            let watcher = try await MessageCollector.start(broker: broker, filters: [Self.willTopic])
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            device.disconnectAbruptly(reconnect: true)
            #expect(await watcher.waitForMessages(count: 1, topic: Self.willTopic).count == 1)
            #expect(await eventually { device.counters.reconnects == 1 && device.state.isConnected })
            await watcher.stop()
        }
    }

    @Test("A clean disconnect sends DISCONNECT: no will")
    func cleanDisconnectPublishesNoWill() async throws {
        try await withBroker { broker in
            let watcher = try await MessageCollector.start(
                broker: broker, filters: [Self.willTopic, "sentinel"])
            let device = try MQTTClient(options: deviceOptions(broker))
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            #expect(await device.disconnectAndWait())
            #expect(device.state == .disconnected(reason: "disconnected by the client"))

            // Anything the broker published because of that disconnect is delivered before this.
            let other = try MQTTClient(options: broker.clientOptions(clientID: "sentinel-pub"))
            defer { other.close() }
            other.connect()
            try await Task.sleep(for: .milliseconds(200))
            try await other.publishAndWaitForAck(topic: "sentinel", payload: [1])
            #expect(await watcher.waitForMessages(count: 1, topic: "sentinel").count == 1)
            #expect(watcher.messages(on: Self.willTopic).isEmpty)
            await watcher.stop()
        }
    }
}
