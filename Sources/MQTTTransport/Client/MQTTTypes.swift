/// One message received from the broker. The payload is a copy made inside libmosquitto's callback,
/// so it outlives the callback.
public struct MQTTMessage: Sendable, Equatable, CustomStringConvertible {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    /// The payload as UTF-8 text (invalid bytes replaced), for logs and tests.
    public var payloadText: String { String(decoding: payload, as: UTF8.self) }

    public var description: String {
        "\(topic) qos \(qos)\(retain ? " retained" : "") \(payload.count) bytes"
    }
}

/// Where a client's connection stands. Reported to the state handler on every change.
public enum MQTTConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// A TCP (and TLS) connection and CONNECT are under way.
    case connecting
    /// CONNACK accepted; subscriptions are being (re)established.
    case connected
    /// Not connected, with a human-readable reason such as "connection refused: 127.0.0.1:1883".
    /// Unless the client was told to disconnect, a retry is already scheduled.
    case disconnected(reason: String)

    public var isConnected: Bool { self == .connected }

    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected(let reason): "disconnected (\(reason))"
        }
    }
}

/// The message the broker publishes for a client whose connection ends without DISCONNECT.
public struct MQTTWill: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// TLS settings, handed to `mosquitto_tls_set`. The broker's certificate is always verified against
/// `caFile`, and its name against the host unless `allowHostnameMismatch`.
public struct MQTTTLSOptions: Sendable, Hashable {
    /// PEM file with the CA certificate(s) that signed the broker's certificate.
    public var caFile: String
    /// PEM client certificate, for brokers that require one (needs `keyFile`).
    public var certFile: String?
    /// PEM private key of `certFile`, unencrypted.
    public var keyFile: String?
    /// Skip the host name check (`mosquitto_tls_insecure_set`); the chain is still verified.
    public var allowHostnameMismatch: Bool

    public init(
        caFile: String, certFile: String? = nil, keyFile: String? = nil,
        allowHostnameMismatch: Bool = false
    ) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.allowHostnameMismatch = allowHostnameMismatch
    }
}

/// MQTT protocol level. PROTOCOL.md section 1: 3.1.1 always, 5 optional.
public enum MQTTProtocolVersion: Sendable, Hashable {
    case v311
    case v5
}

/// Reconnect delays: `initialDelay` doubling up to `maximumDelay`, each multiplied by a random
/// factor in 1 +- `jitter`. Reset after every accepted connection.
public struct MQTTReconnectPolicy: Sendable, Hashable {
    public var initialDelay: Double
    public var maximumDelay: Double
    public var multiplier: Double
    public var jitter: Double

    public init(
        initialDelay: Double = 0.1, maximumDelay: Double = 10, multiplier: Double = 2,
        jitter: Double = 0.2
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The delay before retry number `attempt` (0 = first retry), without jitter.
    public func baseDelay(attempt: Int) -> Double {
        var delay = max(0, initialDelay)
        var step = 0
        while step < attempt && delay < maximumDelay {
            delay *= max(1, multiplier)
            step += 1
        }
        return min(delay, maximumDelay)
    }

    /// The delay before retry number `attempt`, with jitter applied.
    public func delay(attempt: Int, random: Double = Double.random(in: -1...1)) -> Double {
        let base = baseDelay(attempt: attempt)
        let factor = 1 + max(0, min(1, jitter)) * max(-1, min(1, random))
        return max(0, base * factor)
    }
}

/// One item of `MQTTClient.makeInboundStream`: a message, or a change of connection state.
public enum MQTTInbound: Sendable {
    case message(MQTTMessage)
    case state(MQTTConnectionState)
}

/// Everything about one connection. Only `clientID` has no default.
public struct MQTTClientOptions: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var clientID: String
    public var username: String?
    public var password: String?
    public var tls: MQTTTLSOptions?
    /// Seconds between keepalive PINGREQs when idle (MQTT 3.1.1 section 3.1.2.10).
    public var keepAlive: Int
    public var cleanSession: Bool
    public var will: MQTTWill?
    public var protocolVersion: MQTTProtocolVersion
    public var reconnect: MQTTReconnectPolicy
    /// An attempt that has no CONNACK after this many seconds is abandoned and retried.
    public var connectTimeout: Double
    /// Inbound payloads larger than this are dropped without being copied (PROTOCOL.md section 1:
    /// over 64 KiB is refused) and counted in `MQTTClientCounters.droppedOversize`.
    public var maxInboundPayloadBytes: Int
    /// QoS 1/2 messages in flight before libmosquitto queues further publishes locally.
    public var maxInflightMessages: Int
    /// Local address the connection is made from (`--source-ip`); nil lets the kernel choose.
    public var bindAddress: String?

    public init(
        clientID: String, host: String = "127.0.0.1", port: Int = 1883,
        username: String? = nil, password: String? = nil, tls: MQTTTLSOptions? = nil,
        keepAlive: Int = 30, cleanSession: Bool = true, will: MQTTWill? = nil,
        protocolVersion: MQTTProtocolVersion = .v311,
        reconnect: MQTTReconnectPolicy = MQTTReconnectPolicy(),
        connectTimeout: Double = 10, maxInboundPayloadBytes: Int = 64 * 1024,
        maxInflightMessages: Int = 100
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.keepAlive = keepAlive
        self.cleanSession = cleanSession
        self.will = will
        self.protocolVersion = protocolVersion
        self.reconnect = reconnect
        self.connectTimeout = connectTimeout
        self.maxInboundPayloadBytes = maxInboundPayloadBytes
        self.maxInflightMessages = maxInflightMessages
    }

    /// Options for a broker URL: `mqtt://host[:port]` (default 1883), `mqtts://host[:port]`
    /// (default 8883; set `tls` before connecting) or `unix:///path/to.sock` (a Unix domain
    /// socket: `host` is the path and `port` 0, as libmosquitto takes it). Credentials in the URL
    /// (`mqtt://user:pass@host`) become `username`/`password`.
    public init(brokerURL: String, clientID: String) throws(MQTTError) {
        let endpoint = try MQTTBrokerEndpoint(url: brokerURL)
        self.init(
            clientID: clientID, host: endpoint.host, port: endpoint.port,
            username: endpoint.username, password: endpoint.password)
    }

    /// "host:port" (or `unix://PATH`), as used in state reasons.
    public var endpointDescription: String {
        if usesUnixSocket { return MQTTBrokerEndpoint.unixScheme + host }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The broker is reached over a Unix domain socket: `host` is its path and `port` 0 (what
    /// libmosquitto's `mosquitto_connect` takes for one). No TCP option applies to it.
    public var usesUnixSocket: Bool { port == 0 }
}

/// Running totals for one client.
public struct MQTTClientCounters: Sendable, Equatable {
    /// Connection attempts started (TCP connect + CONNECT).
    public var connectAttempts = 0
    /// Connections the broker accepted (CONNACK 0).
    public var connects = 0
    /// Accepted connections after the first one.
    public var reconnects = 0
    /// Messages delivered to the message handler.
    public var messagesIn = 0
    /// Publishes handed to libmosquitto.
    public var messagesOut = 0
    /// Publishes the broker acknowledged (PUBACK for QoS 1, or written to the socket for QoS 0).
    public var messagesAcknowledged = 0
    /// Inbound messages dropped for exceeding `maxInboundPayloadBytes`.
    public var droppedOversize = 0
    /// Inbound messages or states dropped because the consumer's bounded queue was full
    /// (`MQTTClient.makeInboundStream(limit:)`).
    public var droppedInbound = 0

    public init() {}
}

/// Errors from the MQTT transport. Connection trouble is not an error: it is a state.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An option libmosquitto rejected (bad TLS file, bad will topic...).
    case invalidOptions(String)
    /// libmosquitto could not be initialised or a handle not created.
    case library(String)
    /// The event loop could not be created (epoll/eventfd/threads).
    case eventLoop(String)
    /// A topic or filter libmosquitto rejects.
    case invalidTopic(String)
    /// A publish libmosquitto refused (QoS 0 while disconnected, payload too large...).
    case publishFailed(String)
    /// A subscribe libmosquitto refused.
    case subscribeFailed(String)
    /// The client was closed or disconnected while the operation waited.
    case closed
    /// The awaited acknowledgement or state did not arrive in time.
    case timedOut(String)

    public var description: String {
        switch self {
        case .invalidOptions(let text): "invalid MQTT options: \(text)"
        case .library(let text): "libmosquitto: \(text)"
        case .eventLoop(let text): "MQTT event loop: \(text)"
        case .invalidTopic(let text): "invalid topic: \(text)"
        case .publishFailed(let text): "publish failed: \(text)"
        case .subscribeFailed(let text): "subscribe failed: \(text)"
        case .closed: "the MQTT client was closed"
        case .timedOut(let text): "timed out: \(text)"
        }
    }
}
