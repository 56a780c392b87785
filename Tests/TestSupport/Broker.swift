import MQTTTransport

/// Runs `body` with a private mosquitto on a free loopback port, stopped afterwards (also when
/// `body` throws). `MosquittoBroker` itself also stops on deinit, so keeping one in a test struct
/// works too.
public func withBroker<T>(
    _ configuration: MosquittoBroker.Configuration = MosquittoBroker.Configuration(),
    _ body: (MosquittoBroker) async throws -> T
) async throws -> T {
    let broker = try MosquittoBroker(configuration)
    do {
        let result = try await body(broker)
        broker.stop()
        return result
    } catch {
        broker.stop()
        throw error
    }
}

/// A free TCP port on 127.0.0.1 (free a moment ago; see `LoopbackPort.free`).
public func freeLoopbackPort() throws -> Int {
    try LoopbackPort.free()
}
