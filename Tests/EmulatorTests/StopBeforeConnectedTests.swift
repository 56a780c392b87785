import DeviceProfile
import Emulator
import IPCEmuTesting
import MQTTTransport
import Synchronization
import Testing
import TestSupport

/// PROTOCOL.md 1 and 3.3 with the presence published by the MQTT loop thread (`MQTTPresence`): a
/// device stopped after its transport put it online at the SUBACK, but before the device itself
/// heard `.connected`, still leaves its retained status offline. The window is held open on
/// purpose: the transport below keeps the inbox's wake-up from the device until the test lets it go.
@Suite("Device: stop between the transport's presence and .connected", .timeLimit(.minutes(8)), .heavy)
struct StopBeforeConnectedTests {
    /// A real `MQTTClient` whose inbox does not wake its consumer (the device) while held.
    final class HeldTransport: MessageTransport {
        let client: MQTTClient
        private let held = Mutex<(holding: Bool, wakes: [@Sendable () -> Void])>((true, []))

        init(_ client: MQTTClient) { self.client = client }

        /// Wake-ups the device has not had.
        var heldWakes: Int { held.withLock { $0.wakes.count } }

        var options: MQTTClientOptions { client.options }
        var state: MQTTConnectionState { client.state }
        var counters: MQTTClientCounters { client.counters }
        func makeInboundStream(limit: Int) -> AsyncStream<MQTTInbound> { client.makeInboundStream(limit: limit) }
        func makeInbox(limit: Int, wake: @escaping @Sendable () -> Void) -> MQTTInbox {
            client.makeInbox(limit: limit) { [self] in
                let now = held.withLock { state -> Bool in
                    if state.holding { state.wakes.append(wake) }
                    return !state.holding
                }
                if now { wake() }
            }
        }
        func setPresence(_ presence: MQTTPresence) -> Bool { client.setPresence(presence) }
        func clearPresence() -> Bool { client.clearPresence() }
        func connect() { client.connect() }
        func waitUntilConnected(timeout: Duration) async -> Bool { await client.waitUntilConnected(timeout: timeout) }
        func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) throws(MQTTError) {
            try client.publish(topic: topic, payload: payload, qos: qos, retain: retain)
        }
        func publishAndWaitForAck(topic: String, payload: [UInt8], qos: Int, retain: Bool, timeout: Duration) async throws(MQTTError) {
            try await client.publishAndWaitForAck(topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout)
        }
        func subscribe(_ filter: String, qos: Int) throws(MQTTError) { try client.subscribe(filter, qos: qos) }
        func subscribeAndWait(_ filter: String, qos: Int, timeout: Duration) async throws(MQTTError) {
            try await client.subscribeAndWait(filter, qos: qos, timeout: timeout)
        }
        func disconnectAndWait(timeout: Duration) async -> Bool { await client.disconnectAndWait(timeout: timeout) }
        func publishThenDisconnect(_ last: MQTTMessage?, acknowledgement: Duration, close: Duration) async -> Bool {
            await client.publishThenDisconnect(last, acknowledgement: acknowledgement, close: close)
        }
        func beginGoodbye(_ last: MQTTMessage?, acknowledgement: Duration) {
            client.beginGoodbye(last, acknowledgement: acknowledgement)
        }
        func waitUntilClosed(timeout: Duration) async -> Bool { await client.waitUntilClosed(timeout: timeout) }
        func disconnectAbruptly(reconnect: Bool) { client.disconnectAbruptly(reconnect: reconnect) }
        func close() { client.close() }
    }

    @Test("online by the transport, .connected not yet heard: stop() leaves the device's own offline status retained")
    func offlineAfterTransportPresence() async throws {
        let broker = try await startBroker()
        defer { broker.stop() }
        let profile = DeviceProfile.testDoorbell(household: ["u1"], answerPolicy: .manual)
        let onlineTopic = profile.resolvedTopics.online
        let client = try MQTTClient(options: Device.clientOptions(profile: profile,
                                                                  connection: broker.clientOptions(clientID: "")))
        let transport = HeldTransport(client)
        let device = try Device(profile: profile, transport: transport)
        let watcher = try await MessageCollector.start(broker: broker, filters: [onlineTopic], clientID: "online-watcher")
        try await device.start()

        // The transport's presence is on the broker, and the device has not heard `.connected`.
        #expect(await eventually(timeout: .seconds(20)) {
            watcher.messages(on: onlineTopic).contains { $0.payloadText.contains(#""online":true"#) }
        })
        #expect(transport.heldWakes > 0, "the device's inbox never had anything to wake it for")
        #expect(await device.status.connected == false, "the device heard .connected: the window was not held")

        await device.stop()
        await watcher.stop()

        // A fresh subscriber gets the retained status: the device's own offline one (with "t"),
        // not the online one, and not the broker's will (a clean stop publishes none).
        let fresh = try await MessageCollector.start(broker: broker, filters: [onlineTopic], clientID: "online-reader")
        #expect(await eventually(timeout: .seconds(10)) { !fresh.messages(on: onlineTopic).isEmpty })
        let retained = fresh.messages(on: onlineTopic).last?.payloadText ?? ""
        #expect(retained.contains(#""online":false"#) && retained.contains(#""t":"#), "retained: \(retained)")
        await fresh.stop()
    }
}
