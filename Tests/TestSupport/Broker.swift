import MQTTTransport

/// Runs `body` with a private mosquitto on a free loopback port, stopped afterwards (also when
/// `body` throws). `MosquittoBroker` itself also stops on deinit, so keeping one in a test struct
/// works too.
public func withBroker<T>(
    _ configuration: MosquittoBroker.Configuration = MosquittoBroker.Configuration(),
    _ body: (MosquittoBroker) async throws -> T
) async throws -> T {
    let broker = try await startBroker(configuration)
    do {
        let result = try await body(broker)
        await offThePool { broker.stop() }
        return result
    } catch {
        await offThePool { broker.stop() }
        throw error
    }
}

/// A private mosquitto on a free loopback port. Its start waits for the listener (tens of ms, more
/// on a loaded machine) on a thread of its own (`offThePool`), not on a cooperative thread.
public func startBroker(
    _ configuration: MosquittoBroker.Configuration = MosquittoBroker.Configuration()
) async throws -> MosquittoBroker {
    try await offThePool { try MosquittoBroker(configuration) }
}

/// A free TCP port on 127.0.0.1 (free a moment ago; see `LoopbackPort.free`).
public func freeLoopbackPort() throws -> Int {
    try LoopbackPort.free()
}
