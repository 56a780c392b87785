import MQTTTransport
import TestSupport
import Testing

@Suite("TLS and username/password", .serialized)
struct SecurityTests {
    @Test("TLS with the test CA: connect and round trip")
    func tlsRoundTrip() async throws {
        try await withBroker(MosquittoBroker.Configuration(tls: true)) { broker in
            let certificates = try #require(broker.certificates)
            let tlsPort = try #require(broker.tlsPort)
            var options = MQTTClientOptions(clientID: "tls-dev", port: tlsPort)
            options.tls = MQTTTLSOptions(caFile: certificates.caFile)
            let client = try MQTTClient(options: options)
            defer { client.close() }
            client.connect()
            #expect(await client.waitUntilConnected(timeout: .seconds(10)))
            try await client.subscribeAndWait("secure/echo")
            let received = Collected<[String]>([])
            client.setMessageHandler { message in received.withLock { $0.append(message.payloadText) } }
            try await client.publishAndWaitForAck(topic: "secure/echo", payload: Array("over TLS".utf8))
            #expect(await eventually { received.snapshot == ["over TLS"] })
        }
    }

    @Test("TLS with a required client certificate: accepted with it, refused without")
    func tlsClientCertificate() async throws {
        let configuration = MosquittoBroker.Configuration(tls: true, requireClientCertificate: true)
        try await withBroker(configuration) { broker in
            let certificates = try #require(broker.certificates)
            let tlsPort = try #require(broker.tlsPort)
            var withCert = MQTTClientOptions(clientID: "tls-cert", port: tlsPort)
            withCert.tls = MQTTTLSOptions(
                caFile: certificates.caFile, certFile: certificates.clientCertFile,
                keyFile: certificates.clientKeyFile)
            let good = try MQTTClient(options: withCert)
            defer { good.close() }
            good.connect()
            #expect(await good.waitUntilConnected(timeout: .seconds(10)))

            var withoutCert = MQTTClientOptions(clientID: "tls-nocert", port: tlsPort)
            withoutCert.tls = MQTTTLSOptions(caFile: certificates.caFile)
            let bad = try MQTTClient(options: withoutCert)
            defer { bad.close() }
            bad.connect()
            #expect(await eventually { bad.counters.connectAttempts >= 2 })
            #expect(!bad.state.isConnected)
            #expect(bad.counters.connects == 0)
        }
    }

    @Test("A TLS option naming a missing CA file is refused at creation")
    func missingCAFile() {
        var options = MQTTClientOptions(clientID: "tls-missing")
        options.tls = MQTTTLSOptions(caFile: "/nonexistent/ca.crt")
        #expect(throws: MQTTError.self) { _ = try MQTTClient(options: options) }
    }

    @Test("Username/password: right ones connect, wrong ones get a refusal reason")
    func usernamePassword() async throws {
        try await withBroker(MosquittoBroker.Configuration(users: ["dev1": "s3cret"])) { broker in
            var right = broker.clientOptions(clientID: "dev1")
            right.username = "dev1"
            right.password = "s3cret"
            let good = try MQTTClient(options: right)
            defer { good.close() }
            good.connect()
            #expect(await good.waitUntilConnected())

            var wrong = right
            wrong.clientID = "dev1-wrong"
            wrong.password = "guess"
            let bad = try MQTTClient(options: wrong)
            defer { bad.close() }
            let reasons = Collected<[String]>([])
            bad.setStateHandler { state in
                if case .disconnected(let reason) = state { reasons.withLock { $0.append(reason) } }
            }
            bad.connect()
            #expect(await eventually { reasons.snapshot.contains { $0.contains("refused") } })
            print("wrong password: \(reasons.snapshot.first ?? "-")")
            #expect(bad.counters.connects == 0)
        }
    }
}
