import MQTTTransport
import Testing

@Suite("Options and broker URLs")
struct OptionsTests {
    @Test("mqtt:// and mqtts:// URLs parse to host, port, TLS and credentials")
    func brokerURLs() throws {
        let plain = try MQTTBrokerEndpoint(url: "mqtt://127.0.0.1:18830")
        #expect(plain.host == "127.0.0.1")
        #expect(plain.port == 18830)
        #expect(!plain.usesTLS)
        let defaults = try MQTTBrokerEndpoint(url: "mqtts://broker.example")
        #expect(defaults.port == 8883)
        #expect(defaults.usesTLS)
        let credentials = try MQTTBrokerEndpoint(url: "mqtt://dev1:pa:ss@[::1]:1884/")
        #expect(credentials.host == "::1")
        #expect(credentials.port == 1884)
        #expect(credentials.username == "dev1")
        #expect(credentials.password == "pa:ss")
        let options = try MQTTClientOptions(brokerURL: "mqtt://h:1", clientID: "c")
        #expect(options.host == "h" && options.port == 1 && options.clientID == "c")
    }

    @Test("Bad broker URLs are typed errors", arguments: ["http://x", "mqtt://", "mqtt://h:0", "mqtt://h:port", "mqtt://[::1"])
    func badURLs(url: String) {
        #expect(throws: MQTTError.self) { _ = try MQTTBrokerEndpoint(url: url) }
    }

    @Test("The generated broker configuration keeps Nagle off and stays on loopback")
    func brokerConfiguration() {
        let text = MosquittoBroker.Configuration().generatedText(port: 1883)
        #expect(text.contains("listener 1883 127.0.0.1\n"))
        #expect(text.contains("set_tcp_nodelay true\n"))
        #expect(text.contains("persistence false\n"))
        #expect(text.contains("allow_anonymous true\n"))
        #expect(text.contains("connection_messages true\n"))
        // A fleet's private brokers leave out the line per connect and disconnect.
        let quiet = MosquittoBroker.Configuration(logsConnections: false).generatedText(port: 1883)
        #expect(quiet.contains("connection_messages false\n") && !quiet.contains("connection_messages true"))
    }
}
