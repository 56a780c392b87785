import Dispatch
import MQTTTransport

/// The MQTT broker the virtual devices and app users of a test meet on.
///
/// ``start(bindAddress:)`` runs a private `mosquitto` (Debian's package `mosquitto`) on a free
/// loopback port with its own configuration in a temporary folder; ``stop()`` ends it and removes
/// the folder (so does dropping the last reference). ``external(url:)`` uses a broker that is
/// already running, such as a shared one in CI; `stop()` then does nothing.
///
/// ```swift
/// let broker = try await TestBroker.start()
/// defer { broker.stop() }
/// print(broker.url)   // mqtt://127.0.0.1:41235
/// ```
public final class TestBroker: Sendable {
    /// `mqtt://HOST:PORT`: what `ipcemu run --broker`, `ipcemu app --broker` and a phone app take.
    public let url: String
    /// The host clients connect to.
    public let host: String
    /// The plain MQTT port.
    public let port: Int
    /// True for a private mosquitto this object started (and stops).
    public var isEmbedded: Bool { embedded != nil }

    let embedded: MosquittoBroker?
    private let username: String?
    private let password: String?

    private init(embedded: MosquittoBroker?, host: String, port: Int, username: String?, password: String?) {
        self.embedded = embedded
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        let h = host.contains(":") ? "[\(host)]" : host
        self.url = "mqtt://\(h):\(port)"
    }

    /// Starts a private mosquitto on a free port of `bindAddress` (default loopback only) and
    /// returns once it accepts connections.
    /// - Throws: `MosquittoBrokerError` when mosquitto is not installed or does not come up.
    public static func start(bindAddress: String = "127.0.0.1") async throws -> TestBroker {
        // Starting waits for the listener: done on a GCD thread, not one of Swift's few
        // cooperative threads.
        let result: Result<MosquittoBroker, MosquittoBrokerError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(MosquittoBrokerError) {
                    continuation.resume(returning: .success(
                        try MosquittoBroker(MosquittoBroker.Configuration(bindAddress: bindAddress))))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        let broker = try result.get()
        return TestBroker(embedded: broker, host: broker.host, port: broker.port, username: nil, password: nil)
    }

    /// A broker that is already running: `mqtt://host[:port]` (credentials as
    /// `mqtt://user:password@host`). Nothing is contacted until a device or app connects.
    /// - Throws: `MQTTError` for a URL that is not `mqtt://`, `tcp://` (TLS brokers are not supported here).
    public static func external(url: String) throws -> TestBroker {
        let endpoint = try MQTTBrokerEndpoint(url: url)
        guard !endpoint.usesTLS else {
            throw MQTTError.invalidOptions("TestBroker.external takes mqtt:// URLs; got '\(url)' (use Device and AppUser with MQTTClientOptions for TLS)")
        }
        return TestBroker(embedded: nil, host: endpoint.host, port: endpoint.port,
                          username: endpoint.username, password: endpoint.password)
    }

    /// Stops a private broker (its clients see the connection drop). Does nothing for an
    /// external one. Safe to call more than once.
    public func stop() {
        embedded?.stop()
    }

    /// Connection options for one client of this broker.
    func clientOptions(clientID: String) -> MQTTClientOptions {
        MQTTClientOptions(clientID: clientID, host: host, port: port, username: username, password: password)
    }
}
