import CMosquitto
import Foundation
import MQTTTransport
import TuyaCloud

/// What the runner tells the program that runs the device (`ipcemu run --cloud tuya`).
public enum CloudRunnerEvent: Sendable {
    /// Show this pairing QR code (PROTOCOL.md 9.2) until `.pairingDone`.
    case pairing(url: String)
    case pairingDone
    /// The device link is up: run the device on `link` with this identity. `caFile` is the PEM of
    /// the CA the link is pinned to.
    case joined(CloudDeviceIdentity, link: CloudDeviceLink, caFile: String)
    /// The device link went down: stop using it until the next `.joined`.
    case left(why: String)
    /// One line for the log.
    case log(CloudLogLevel, String)
}

/// Runs a `CloudJoinMachine` (PROTOCOL.md 9) in real time: it carries out every effect (HTTPS
/// through `CloudHTTPS`, MQTT through `MQTTClient` with TLS, the state file, timers) and feeds what
/// happens back as the machine's inputs. The machine decides everything; the runner decides nothing.
///
/// MQTT: one connection per `.mqttConnect`, never reconnected by the client itself (the machine's
/// backoff decides when to try again): the first failure is fed back and the connection closed.
/// A CONNACK refusal is told apart from other failures by libmosquitto's text for each code.
public actor CloudJoinRunner {
    public struct Configuration: Sendable {
        public var join: CloudJoinConfig
        /// Where the state is kept (PROTOCOL.md 9; TuyaCloud's store: one JSON file, 0600, atomic).
        public var stateStore: CloudStateStore
        /// The CA (DER) iotdns is pinned to when the configuration's `IotDNSServer` names none
        /// (`--cloud-ca`; nil: the system's trust store).
        public var iotdnsCA: [UInt8]?
        /// The device link's last will, by devId (PROTOCOL.md 1: retained offline status).
        public var deviceLinkWill: @Sendable (String) -> MQTTWill?
        /// The least CONNACK wait, whatever the SDK's value (2 s on the device link) [ours: a loaded
        /// test machine can take longer over TLS].
        public var minimumConnectTimeout: Double
        /// Awaited before each HTTPS request is made (a fleet's pacing of iotdns and activation
        /// requests, `CloudFleetPacer`); nil: at once.
        public var beforeRequest: (@Sendable (HTTPSRequest.Purpose) async -> Void)?

        public init(join: CloudJoinConfig, stateStore: CloudStateStore, iotdnsCA: [UInt8]? = nil,
                    deviceLinkWill: @escaping @Sendable (String) -> MQTTWill? = { _ in nil }, minimumConnectTimeout: Double = 5,
                    beforeRequest: (@Sendable (HTTPSRequest.Purpose) async -> Void)? = nil) {
            self.join = join
            self.stateStore = stateStore
            self.iotdnsCA = iotdnsCA
            self.deviceLinkWill = deviceLinkWill
            self.minimumConnectTimeout = minimumConnectTimeout
            self.beforeRequest = beforeRequest
        }
    }

    private struct OpenLink {
        let generation: UInt64
        let request: MQTTConnectRequest
        let client: MQTTClient
        let caFile: String
        let device: CloudDeviceLink?
        var pump: Task<Void, Never>?
        var acknowledged = false
    }

    public nonisolated let events: AsyncStream<CloudRunnerEvent>
    private let sink: AsyncStream<CloudRunnerEvent>.Continuation
    private let configuration: Configuration
    private let https: CloudHTTPS
    private var machine: CloudJoinMachine
    private var link: OpenLink?
    private var generation: UInt64 = 0
    private var timers: [CloudJoinTimer: (token: UInt64, task: Task<Void, Never>)] = [:]
    private var timerTokens: UInt64 = 0
    private var requests: [UInt64: Task<Void, Never>] = [:]
    private var stopped = false

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.machine = CloudJoinMachine(config: configuration.join)
        self.https = CloudHTTPS(iotdnsCA: configuration.iotdnsCA)
        let (stream, continuation) = AsyncStream<CloudRunnerEvent>.makeStream()
        events = stream
        sink = continuation
    }

    /// Where the machine is (for logs and status).
    public var phase: CloudJoinPhase { machine.phase }

    /// Starts with the stored state (a file that cannot be read counts as none, and is said so).
    public func start() {
        var loaded: CloudState?
        switch configuration.stateStore.load() {
        case .absent:
            loaded = nil
        case .loaded(let state):
            loaded = state
        case .corrupt(let why):
            sink.yield(.log(.warning, "cloud state: \(why); starting as a device that was never paired"))
        }
        feed(.start(loaded))
    }

    /// `ipcemu cloud unpair` while running (the SDK's `tuya_iot_reset`).
    public func unpair() {
        feed(.unpair)
    }

    /// Stops timers and requests and closes the link with a DISCONNECT (the device has published
    /// its offline status before). No event follows.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        for (_, timer) in timers { timer.task.cancel() }
        timers.removeAll()
        for (_, task) in requests { task.cancel() }
        requests.removeAll()
        if let open = link {
            link = nil
            open.device?.finish()
            open.pump?.cancel()
            _ = await open.client.disconnectAndWait(timeout: .seconds(2))
            open.client.close()
        }
        sink.finish()
    }

    // MARK: Inputs

    private func feed(_ input: CloudJoinInput) {
        guard !stopped else { return }
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        for effect in machine.handle(input, now: now) {
            carryOut(effect, now: now)
        }
    }

    private func carryOut(_ effect: CloudJoinEffect, now: Int64) {
        switch effect {
        case .httpsRequest(let request):
            let https = self.https, beforeRequest = configuration.beforeRequest
            requests[request.id] = Task { [weak self] in
                if let beforeRequest {
                    await beforeRequest(request.purpose)
                    if Task.isCancelled { return }
                }
                let input = await https.perform(request)
                await self?.answered(request.id, input)
            }
        case .mqttConnect(let request):
            openLink(request)
        case .mqttDisconnect:
            closeLink()
        case .mqttPublish(let topic, let payload, let qos):
            do {
                try link?.client.publish(topic: topic, payload: payload, qos: Int(qos), retain: false)
            } catch {
                sink.yield(.log(.warning, "cloud: publishing on \(topic) failed: \(error)"))
            }
        case .storeState(let state):
            do {
                try configuration.stateStore.save(state)
            } catch {
                sink.yield(.log(.error, "cloud state: \(error); the device will have to pair again after a restart"))
            }
        case .eraseState:
            do {
                try configuration.stateStore.erase()
            } catch {
                sink.yield(.log(.error, "cloud state: \(error)"))
            }
        case .showPairing(let url):
            sink.yield(.pairing(url: url))
        case .hidePairing:
            sink.yield(.pairingDone)
        case .armTimer(let timer, let at):
            arm(timer, at: at, now: now)
        case .cancelTimer(let timer):
            timers.removeValue(forKey: timer)?.task.cancel()
        case .joined(let identity):
            if let open = link, let device = open.device {
                sink.yield(.joined(identity, link: device, caFile: open.caFile))
            } else {
                sink.yield(.log(.error, "cloud: joined without an open device link (a runner bug)"))
            }
        case .left(let why):
            sink.yield(.left(why: why))
        case .log(let level, let text):
            sink.yield(.log(level, text))
        }
    }

    private func answered(_ id: UInt64, _ input: CloudJoinInput) {
        guard requests.removeValue(forKey: id) != nil else { return }
        feed(input)
    }

    // MARK: Timers

    private func arm(_ timer: CloudJoinTimer, at: Int64, now: Int64) {
        timers[timer]?.task.cancel()
        timerTokens &+= 1
        let token = timerTokens
        let delay = max(0, at &- now)
        let task = Task { [weak self] in
            do { try await Task.sleep(for: .milliseconds(delay)) } catch { return }
            await self?.fire(timer, token: token)
        }
        timers[timer] = (token, task)
    }

    private func fire(_ timer: CloudJoinTimer, token: UInt64) {
        guard timers[timer]?.token == token else { return }
        timers.removeValue(forKey: timer)
        feed(.timerFired(timer))
    }

    // MARK: MQTT

    private func openLink(_ request: MQTTConnectRequest) {
        closeLink()
        generation &+= 1
        let caFile: String
        do {
            caFile = try PEMFile.write(der: request.caDER)
        } catch {
            feed(.mqttConnectFailed(why: "cannot write the broker's CA as PEM: \(error.localizedDescription)"))
            return
        }
        var options = MQTTClientOptions(
            clientID: request.clientId, host: request.host, port: request.port,
            username: request.username, password: request.password, tls: MQTTTLSOptions(caFile: caFile),
            keepAlive: request.keepAliveSeconds, cleanSession: request.cleanSession,
            will: request.link == .device ? configuration.deviceLinkWill(request.clientId) : nil,
            reconnect: MQTTReconnectPolicy(initialDelay: 3600, maximumDelay: 3600, jitter: 0),
            connectTimeout: max(Double(request.timeoutMs) / 1000, configuration.minimumConnectTimeout))
        // What the device receives through the link may be up to 1 MiB: the wire decoder refuses
        // oversized payloads itself, with a log line (PROTOCOL.md 1), as on any broker.
        options.maxInboundPayloadBytes = 1 << 20
        let client: MQTTClient
        do {
            client = try MQTTClient(options: options)
        } catch {
            feed(.mqttConnectFailed(why: "\(error)"))
            return
        }
        let device = request.link == .device
            ? CloudDeviceLink(client: client, inTopic: request.subscriptions.first ?? "smart/device/in/" + request.clientId)
            : nil
        let generation = self.generation
        var open = OpenLink(generation: generation, request: request, client: client, caFile: caFile, device: device)
        let stream = client.makeInboundStream(limit: 1024)
        open.pump = Task { [weak self] in
            for await item in stream {
                await self?.linkItem(item, generation: generation)
            }
        }
        link = open
        client.connect()
    }

    private func closeLink() {
        guard let open = link else { return }
        link = nil
        open.device?.finish()
        open.pump?.cancel()
        open.client.disconnect()
        open.client.close()
    }

    private func linkItem(_ item: MQTTInbound, generation: UInt64) {
        guard let open = link, open.generation == generation else { return }
        switch item {
        case .message(let message):
            if open.request.link == .direct, message.topic == open.request.subscriptions.first {
                feed(.tokenMessage(message.payload))
            } else if message.topic.hasPrefix("rpc/rsp/") {
                feed(.rpcAnswer(message.payload))
            } else if let device = open.device, message.topic == device.inTopic {
                device.deliver(item)
            }
        case .state(let state):
            switch state {
            case .connecting:
                break
            case .connected:
                open.device?.deliver(item)
                if !open.acknowledged { subscribeAll(open) }
            case .disconnected(let reason):
                open.device?.deliver(item)
                let input: CloudJoinInput
                if let code = Self.connackCode(in: reason) {
                    input = .mqttConnackRefused(code: code)
                } else if open.acknowledged {
                    input = .mqttDisconnected(why: reason)
                } else {
                    input = .mqttConnectFailed(why: reason)
                }
                closeLink()
                feed(input)
            }
        }
    }

    /// Subscribes to the request's topics (QoS 1, in order), then tells the machine the link is up.
    private func subscribeAll(_ open: OpenLink) {
        let client = open.client, filters = open.request.subscriptions, generation = open.generation
        Task { [weak self] in
            var failure: String?
            for filter in filters {
                do {
                    try await client.subscribeAndWait(filter, qos: 1, timeout: .seconds(5))
                } catch {
                    failure = "subscribing to \(filter) failed: \(error)"
                    break
                }
            }
            await self?.subscribed(generation: generation, failure: failure)
        }
    }

    private func subscribed(generation: UInt64, failure: String?) {
        guard var open = link, open.generation == generation, !open.acknowledged else { return }
        if let failure {
            closeLink()
            feed(.mqttConnectFailed(why: failure))
            return
        }
        open.acknowledged = true
        link = open
        feed(.mqttConnected)
    }

    /// The CONNACK code (1-5) of a refusal reason from `MQTTClient` ("broker refused the connection
    /// (<libmosquitto's text for the code>): host:port"), nil for any other reason.
    static func connackCode(in reason: String) -> UInt8? {
        guard reason.hasPrefix("broker refused the connection (") else { return nil }
        for code in 1...5 {
            if let text = mosquitto_connack_string(Int32(code)), reason.contains("(" + String(cString: text) + ")") {
                return UInt8(code)
            }
        }
        return nil
    }
}
