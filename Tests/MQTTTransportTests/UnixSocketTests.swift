import Foundation
import MQTTTransport
import TestSupport
import Synchronization
import Testing

/// Clients that reach their broker over a Unix domain socket (`unix:///path/to.sock`; docs/fleet.md
/// "Devices over Unix sockets"), against a real mosquitto listening on one beside its TCP port.
@Suite("Unix socket brokers", .serialized)
struct UnixSocketTests {
    static let willTopic = "smart/device/meta/ux1/online"

    @Test("unix:///PATH parses to the path with port 0; the endpoint says unix://PATH")
    func unixURL() throws {
        let endpoint = try MQTTBrokerEndpoint(url: "unix:///run/ipcemu/mqtt-0.sock")
        #expect(endpoint.host == "/run/ipcemu/mqtt-0.sock")
        #expect(endpoint.port == 0)
        #expect(endpoint.unixSocketPath == "/run/ipcemu/mqtt-0.sock")
        #expect(!endpoint.usesTLS && endpoint.username == nil)
        let options = try MQTTClientOptions(brokerURL: "unix:///run/ipcemu/mqtt-0.sock", clientID: "c")
        #expect(options.usesUnixSocket)
        #expect(options.host == "/run/ipcemu/mqtt-0.sock" && options.port == 0)
        #expect(options.endpointDescription == "unix:///run/ipcemu/mqtt-0.sock")
        #expect(!(try MQTTClientOptions(brokerURL: "mqtt://h:1", clientID: "c")).usesUnixSocket)
        // The longest path a socket address holds (107 bytes and its NUL) is taken.
        let longest = "/" + String(repeating: "p", count: 106)
        #expect(try MQTTBrokerEndpoint(url: "unix://" + longest).host == longest)
    }

    @Test("Bad unix URLs are refused with what is wrong, naming the URL or path")
    func badUnixURLs() {
        let tooLong = "/" + String(repeating: "p", count: 107)
        for (url, text) in [
            ("unix://", "no socket path"),
            ("unix://relative/mqtt.sock", "absolute socket path"),
            ("unix://" + tooLong, "108 bytes, longer than the 107"),
        ] {
            do {
                _ = try MQTTBrokerEndpoint(url: url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(error.description.contains(text), "\(url): \(error)")
                let named = url == "unix://" ? url : String(url.dropFirst("unix://".count))
                #expect(error.description.contains(named), "\(url): \(error)")
            }
        }
        // Options made without a URL are checked when the client is made, never at each attempt.
        var long = MQTTClientOptions(clientID: "c", host: tooLong, port: 0)
        #expect(throws: MQTTError.self) { _ = try MQTTClient(options: long) }
        long.host = "/tmp/ok.sock"
        long.bindAddress = "127.0.0.2"
        do {
            _ = try MQTTClient(options: long)
            Issue.record("a bind address with a Unix socket was accepted")
        } catch {
            #expect(error.description.contains("cannot be used with a Unix socket broker"), "\(error)")
        }
    }

    @Test("The generated configuration has a listener 0 PATH per socket; warnings can be left out")
    func configuration() {
        let text = MosquittoBroker.Configuration(logsWarnings: false)
            .generatedText(port: 1883, unixSocketPaths: ["/tmp/x/mqtt-0.sock", "/tmp/x/mqtt-1.sock"])
        #expect(text.contains("listener 1883 127.0.0.1\n"))
        #expect(text.contains("listener 0 /tmp/x/mqtt-0.sock\n") && text.contains("listener 0 /tmp/x/mqtt-1.sock\n"))
        #expect(!text.contains("log_type warning") && text.contains("log_type error\n"))
        #expect(MosquittoBroker.Configuration().generatedText(port: 1883).contains("log_type warning\n"))
    }

    @Test("A client over a Unix socket publishes retained and receives what a TCP client publishes")
    func publishAndReceive() async throws {
        try await withBroker(MosquittoBroker.Configuration(unixSockets: 2)) { broker in
            #expect(broker.unixSocketPaths.count == 2)
            #expect(broker.unixURLs.allSatisfy { $0.hasPrefix("unix://" + broker.directory + "/") })
            let device = try MQTTClient(options: MQTTClientOptions(brokerURL: broker.unixURLs[1], clientID: "ux1"))
            defer { device.close() }
            let inbox = Inbox()
            device.setMessageHandler { inbox.add($0) }
            device.connect()
            #expect(await device.waitUntilConnected())
            try await device.subscribeAndWait("to/ux1", qos: 1)
            try await device.publishAndWaitForAck(topic: "smart/device/meta/ux1", payload: Array("meta".utf8), qos: 1, retain: true)
            // A TCP client sees the retained message, and reaches the Unix socket client.
            let watcher = try await MessageCollector.start(broker: broker, filters: ["smart/device/meta/ux1"])
            #expect(await watcher.waitForMessages(count: 1).map(\.payloadText) == ["meta"])
            try await watcher.client.publishAndWaitForAck(topic: "to/ux1", payload: Array("hello".utf8), qos: 1)
            #expect(await eventually { inbox.texts == ["hello"] }, "\(inbox.texts)")
            await watcher.stop()
        }
    }

    @Test("disconnectAbruptly() over a Unix socket: the broker publishes the will; the client stays down")
    func abruptDropPublishesWill() async throws {
        try await withBroker(MosquittoBroker.Configuration(unixSockets: 1)) { broker in
            let watcher = try await MessageCollector.start(broker: broker, filters: [Self.willTopic])
            var options = try MQTTClientOptions(brokerURL: broker.unixURLs[0], clientID: "ux1")
            options.will = MQTTWill(topic: Self.willTopic, payload: Array("{\"online\":false}".utf8), qos: 1)
            let device = try MQTTClient(options: options)
            defer { device.close() }
            device.connect()
            #expect(await device.waitUntilConnected())
            device.disconnectAbruptly()
            let wills = await watcher.waitForMessages(count: 1, topic: Self.willTopic)
            #expect(wills.map(\.payloadText) == ["{\"online\":false}"])
            #expect(await eventually { !device.state.isConnected })
            guard case .disconnected(let reason) = device.state else {
                Issue.record("state is \(device.state)")
                return
            }
            #expect(reason.contains("disconnectAbruptly") && reason.contains("unix://"), "\(reason)")

            // A clean disconnect after a reconnect: no second will.
            device.connect()
            #expect(await device.waitUntilConnected())
            #expect(await device.disconnectAndWait())
            #expect(device.state == .disconnected(reason: "disconnected by the client"))
            try await watcher.client.subscribeAndWait("sentinel", qos: 1)
            try await watcher.client.publishAndWaitForAck(topic: "sentinel", payload: [1], qos: 1)
            #expect(await watcher.waitForMessages(count: 1, topic: "sentinel").count == 1)
            #expect(watcher.messages(on: Self.willTopic).count == 1)
            await watcher.stop()
        }
    }

    @Test("stop() removes the socket files; restart() makes them again and clients reconnect")
    func socketFilesFollowTheBroker() async throws {
        let broker = try await startBroker(MosquittoBroker.Configuration(unixSockets: 1))
        defer { broker.stop() }
        let path = broker.unixSocketPaths[0]
        #expect(FileManager.default.fileExists(atPath: path))
        let client = try MQTTClient(options: MQTTClientOptions(brokerURL: broker.unixURLs[0], clientID: "ux-restart"))
        defer { client.close() }
        client.connect()
        #expect(await client.waitUntilConnected())
        await offThePool { broker.kill() }   // killed: mosquitto itself does not remove the file
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(await eventually { !client.state.isConnected })
        try await offThePool { try broker.restart() }
        #expect(UnixSocketProbe.isAccepting(path: path))
        #expect(await eventually(timeout: .seconds(10)) { client.state.isConnected })
    }
}

/// Messages one client received, in order.
private final class Inbox: Sendable {
    private let received = Mutex<[MQTTMessage]>([])
    func add(_ m: MQTTMessage) { received.withLock { $0.append(m) } }
    var texts: [String] { received.withLock { $0.map(\.payloadText) } }
}
