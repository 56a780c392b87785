import MQTTTransport
import ServiceLifecycle

/// The private mosquitto as a service: started (and listening) before the group runs, stopped
/// last, after every device has published its offline status through it.
struct BrokerService: Service, CustomStringConvertible {
    let broker: MosquittoBroker

    var description: String { "private broker \(broker.url)" }

    func run() async throws {
        try? await gracefulShutdown()
        broker.stop()
    }
}
