#if canImport(Glibc)
import Glibc
#endif

/// Errors starting or controlling a private broker.
public enum MosquittoBrokerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The mosquitto executable was not found.
    case notInstalled(String)
    /// A system call failed.
    case system(String)
    /// openssl or mosquitto_passwd failed.
    case toolFailed(String)
    /// mosquitto did not come up; carries the end of its log.
    case startFailed(String)

    public var description: String {
        switch self {
        case .notInstalled(let text): "mosquitto not installed: \(text)"
        case .system(let text): "broker: \(text)"
        case .toolFailed(let text): "broker setup tool failed: \(text)"
        case .startFailed(let text): "mosquitto did not start: \(text)"
        }
    }
}

/// A private `mosquitto` process (Debian's /usr/sbin/mosquitto) on a free loopback port, with a
/// generated configuration in its own temporary directory. Used by the tests and by `ipcemu run`
/// without `--broker` (the embedded default).
///
/// The configuration: `listener PORT 127.0.0.1`, anonymous access (or a password file when
/// `users` is set), `set_tcp_nodelay true` (DESIGN.md: Nagle costs ~40 ms per exchange),
/// `persistence false`, bounded inflight/queued messages, and `user root` when we are root so
/// mosquitto does not drop to the `mosquitto` user (which could not read our files).
/// Optionally a second, TLS listener with certificates from a generated `TestCertificateAuthority`.
///
/// `stop()` and `kill()` end the process; `restart()` brings it back on the same port(s) (for
/// broker-restart tests). Deinitialising stops it and deletes the directory.
public final class MosquittoBroker: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The mosquitto executable; default: /usr/sbin/mosquitto, else PATH.
        public var executable: String?
        /// Address the listeners bind. Use "0.0.0.0" to let other machines (a phone) connect.
        public var bindAddress: String
        /// Plain MQTT port; nil picks a free one.
        public var port: Int?
        /// Adds a TLS listener (on `tlsPort`, or a free one) with a generated test CA.
        public var tls: Bool
        public var tlsPort: Int?
        /// The TLS listener requires a client certificate signed by the test CA.
        public var requireClientCertificate: Bool
        /// username -> password. Non-empty: a password file, and anonymous clients are refused.
        public var users: [String: String]
        public var maxInflightMessages: Int
        public var maxQueuedMessages: Int
        /// Log every packet (`log_type all`), for debugging.
        public var verboseLog: Bool
        /// Log each client's connect and disconnect (`connection_messages`): on by default; a
        /// fleet's private brokers turn it off (100,000 devices are 300,000 lines a reconnect storm).
        public var logsConnections: Bool
        /// Log mosquitto's warnings (`log_type warning`): on by default. mosquitto 2.0.11 tries
        /// `TCP_NODELAY` on every accepted socket (`set_tcp_nodelay true`) and logs "Unable to set
        /// TCP_NODELAY" for each one accepted on a Unix socket; a fleet's private brokers with
        /// Unix socket listeners turn it off (docs/fleet.md "Devices over Unix sockets").
        public var logsWarnings: Bool
        /// Unix domain socket listeners (`listener 0 PATH`), in the broker's private directory
        /// (`mqtt-0.sock`, ...), beside the TCP listener; their paths are `unixSocketPaths`.
        public var unixSockets: Int
        /// Extra lines appended to the generated mosquitto.conf.
        public var extraConfiguration: [String]
        /// Seconds to wait for the listeners to accept connections.
        public var startupTimeout: Double

        public init(
            executable: String? = nil, bindAddress: String = "127.0.0.1", port: Int? = nil,
            tls: Bool = false, tlsPort: Int? = nil, requireClientCertificate: Bool = false,
            users: [String: String] = [:], maxInflightMessages: Int = 100,
            maxQueuedMessages: Int = 10_000, verboseLog: Bool = false, logsConnections: Bool = true,
            logsWarnings: Bool = true, unixSockets: Int = 0,
            extraConfiguration: [String] = [], startupTimeout: Double = 10
        ) {
            self.executable = executable
            self.bindAddress = bindAddress
            self.port = port
            self.tls = tls
            self.tlsPort = tlsPort
            self.requireClientCertificate = requireClientCertificate
            self.users = users
            self.maxInflightMessages = maxInflightMessages
            self.maxQueuedMessages = maxQueuedMessages
            self.verboseLog = verboseLog
            self.logsConnections = logsConnections
            self.logsWarnings = logsWarnings
            self.unixSockets = unixSockets
            self.extraConfiguration = extraConfiguration
            self.startupTimeout = startupTimeout
        }
    }

    public let configuration: Configuration
    /// The host clients connect to (127.0.0.1 unless bound to a specific address).
    public let host: String
    /// The plain MQTT port.
    public let port: Int
    /// The TLS port, when `configuration.tls`.
    public let tlsPort: Int?
    /// The test CA, server and client certificates, when `configuration.tls`.
    public let certificates: TestCertificateAuthority?
    /// The broker's private directory: mosquitto.conf, mosquitto.log, certificates.
    public let directory: String
    public let configPath: String
    public let logPath: String
    /// The Unix socket listeners' paths (`configuration.unixSockets` of them), in the directory.
    public let unixSocketPaths: [String]
    private let executable: String
    private let process = Locked<pid_t?>(nil)

    /// `mqtt://127.0.0.1:PORT`
    public var url: String { "mqtt://\(host):\(port)" }
    /// `mqtts://127.0.0.1:TLSPORT`, when TLS is on.
    public var tlsURL: String? { tlsPort.map { "mqtts://\(host):\($0)" } }
    /// `unix:///PATH` of every Unix socket listener.
    public var unixURLs: [String] { unixSocketPaths.map(MQTTBrokerEndpoint.unixURL(path:)) }

    /// Client options for this broker (plain listener).
    public func clientOptions(clientID: String) -> MQTTClientOptions {
        MQTTClientOptions(clientID: clientID, host: host, port: port)
    }

    /// Starts mosquitto and returns once it accepts connections. With automatic ports, a port
    /// taken in the meantime by someone else is retried with new ports.
    public init(_ configuration: Configuration = Configuration()) throws(MosquittoBrokerError) {
        let installed = configuration.executable.flatMap { ChildProcess.find($0) }
            ?? ChildProcess.find("mosquitto", preferring: ["/usr/sbin"])
        guard let installed else {
            throw .notInstalled(configuration.executable ?? "mosquitto (Debian package mosquitto)")
        }
        let directory = try makeTemporaryDirectory(prefix: "ipcemu-mosquitto")
        do throws(MosquittoBrokerError) {
            let certificates: TestCertificateAuthority? =
                configuration.tls ? try TestCertificateAuthority(directory: directory) : nil
            let passwordFile = try Self.writePasswordFile(configuration.users, directory: directory)
            let configPath = directory + "/mosquitto.conf"
            let logPath = directory + "/mosquitto.log"
            let socketPaths = (0..<max(0, configuration.unixSockets)).map { directory + "/mqtt-\($0).sock" }
            if let long = socketPaths.last, long.utf8.count > MQTTBrokerEndpoint.maximumUnixPathBytes {
                throw .system("Unix socket path \(long) is \(long.utf8.count) bytes, longer than the "
                              + "\(MQTTBrokerEndpoint.maximumUnixPathBytes) a socket address holds (set TMPDIR to a shorter directory)")
            }
            var lastError = MosquittoBrokerError.startFailed("no attempt made")
            let automatic = configuration.port == nil || (configuration.tls && configuration.tlsPort == nil)
            for _ in 0..<(automatic ? 8 : 1) {
                let port = try Self.portOrFree(configuration.port)
                var tlsPort: Int?
                if configuration.tls {
                    var candidate = try Self.portOrFree(configuration.tlsPort)
                    while candidate == port { candidate = try LoopbackPort.free() }
                    tlsPort = candidate
                }
                try writeText(
                    Self.configurationText(
                        configuration, port: port, tlsPort: tlsPort, certificates: certificates,
                        passwordFile: passwordFile, unixSocketPaths: socketPaths),
                    to: configPath)
                do {
                    let pid = try Self.launch(
                        installed, configPath: configPath, logPath: logPath,
                        bindAddress: configuration.bindAddress, ports: [port] + (tlsPort.map { [$0] } ?? []),
                        socketPaths: socketPaths, timeout: configuration.startupTimeout)
                    self.configuration = configuration
                    self.host = Self.clientHost(for: configuration.bindAddress)
                    self.port = port
                    self.tlsPort = tlsPort
                    self.certificates = certificates
                    self.directory = directory
                    self.configPath = configPath
                    self.logPath = logPath
                    self.unixSocketPaths = socketPaths
                    self.executable = installed
                    process.withLock { $0 = pid }
                    return
                } catch {
                    lastError = error
                }
            }
            throw lastError
        } catch {
            removeTree(directory)
            throw error
        }
    }

    deinit {
        stop()
        removeTree(directory)
    }

    /// The mosquitto process id while it runs.
    public var pid: Int32? {
        process.withLock { (current: inout pid_t?) -> pid_t? in
            guard let pid = current else { return nil }
            if ChildProcess.status(of: pid, wait: false) != .running { current = nil }
            return current
        }
    }

    public var isRunning: Bool { pid != nil }

    /// mosquitto's log so far (all runs).
    public func log() -> String { readText(logPath) }

    /// SIGTERM, then SIGKILL after 5 s; returns once the process is gone.
    public func stop() {
        end(signal: SIGTERM, grace: 5)
    }

    /// SIGKILL, as a crash would: clients see their connections drop. Returns once it is gone.
    public func kill() {
        end(signal: SIGKILL, grace: 5)
    }

    /// Ends the process and removes its Unix socket files (mosquitto removes them when it exits
    /// cleanly, not when killed); `restart()` makes them again.
    private func end(signal: Int32, grace: Double) {
        process.withLock { (current: inout pid_t?) in
            guard let pid = current else { return }
            current = nil
            defer { for path in unixSocketPaths { unlink(path) } }
            if ChildProcess.status(of: pid, wait: false) != .running { return }
            _ = Glibc.kill(pid, signal)
            if ChildProcess.waitForExit(pid, timeout: grace) == .running {
                _ = Glibc.kill(pid, SIGKILL)
                _ = ChildProcess.status(of: pid, wait: true)
            }
        }
    }

    /// Starts mosquitto again on the same port(s), stopping it first if it runs. Retries binding
    /// for up to `startupTimeout` seconds.
    public func restart() throws(MosquittoBrokerError) {
        stop()
        let ports = [port] + (tlsPort.map { [$0] } ?? [])
        let deadline = monotonicSeconds() + configuration.startupTimeout
        while true {
            do {
                let pid = try Self.launch(
                    executable, configPath: configPath, logPath: logPath,
                    bindAddress: configuration.bindAddress, ports: ports, socketPaths: unixSocketPaths,
                    timeout: max(1, deadline - monotonicSeconds()))
                process.withLock { $0 = pid }
                return
            } catch {
                if monotonicSeconds() >= deadline { throw error }
                usleep(100_000)
            }
        }
    }

    // MARK: Internals

    private static func portOrFree(_ port: Int?) throws(MosquittoBrokerError) -> Int {
        if let port { return port }
        return try LoopbackPort.free()
    }

    private static func clientHost(for bindAddress: String) -> String {
        bindAddress == "0.0.0.0" || bindAddress.isEmpty ? "127.0.0.1" : bindAddress
    }

    /// Spawns mosquitto and waits until every port and Unix socket accepts and the process is
    /// still ours.
    private static func launch(
        _ executable: String, configPath: String, logPath: String, bindAddress: String,
        ports: [Int], socketPaths: [String], timeout: Double
    ) throws(MosquittoBrokerError) -> pid_t {
        let pid = try ChildProcess.spawn(
            executable: executable, arguments: ["-c", configPath], outputPath: logPath)
        let deadline = monotonicSeconds() + timeout
        let probeHost = clientHost(for: bindAddress)
        while true {
            let status = ChildProcess.status(of: pid, wait: false)
            guard status == .running else {
                throw .startFailed("exited (\(status)): \(readText(logPath).suffix(1200))")
            }
            if ports.allSatisfy({ LoopbackPort.isAccepting(port: $0, host: probeHost) }),
               socketPaths.allSatisfy(UnixSocketProbe.isAccepting(path:)) {
                // Someone else may own the port; ours exits at once when its bind fails.
                usleep(30_000)
                if ChildProcess.status(of: pid, wait: false) == .running { return pid }
                continue
            }
            if monotonicSeconds() >= deadline {
                _ = Glibc.kill(pid, SIGKILL)
                _ = ChildProcess.status(of: pid, wait: true)
                throw .startFailed(
                    "no listener on \(ports) \(socketPaths) after \(timeout) s: \(readText(logPath).suffix(1200))")
            }
            usleep(10_000)
        }
    }

    private static func writePasswordFile(
        _ users: [String: String], directory: String
    ) throws(MosquittoBrokerError) -> String? {
        guard !users.isEmpty else { return nil }
        guard let tool = ChildProcess.find("mosquitto_passwd", preferring: ["/usr/bin"]) else {
            throw .notInstalled("mosquitto_passwd (Debian package mosquitto)")
        }
        let path = directory + "/passwords"
        try writeText("", to: path)
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            try ChildProcess.run(
                tool, ["-b", path, user, password], logPath: directory + "/mosquitto_passwd.log")
        }
        return path
    }

    static func configurationText(
        _ configuration: Configuration, port: Int, tlsPort: Int?,
        certificates: TestCertificateAuthority?, passwordFile: String?, unixSocketPaths: [String] = []
    ) -> String {
        var lines = [
            "# Generated by ipcemu for a private broker; rewritten on every start.",
            "per_listener_settings false",
            "allow_anonymous \(passwordFile == nil)",
            "set_tcp_nodelay true",
            "persistence false",
            "max_inflight_messages \(configuration.maxInflightMessages)",
            "max_queued_messages \(configuration.maxQueuedMessages)",
            "log_dest stderr",
            "log_timestamp true",
            "connection_messages \(configuration.logsConnections)",
        ]
        lines += configuration.verboseLog
            ? ["log_type all"]
            : ["log_type error"] + (configuration.logsWarnings ? ["log_type warning"] : [])
                + ["log_type notice", "log_type information"]
        // As root, mosquitto drops to the `mosquitto` user unless told to stay root.
        if geteuid() == 0 { lines.append("user root") }
        if let passwordFile { lines.append("password_file \(passwordFile)") }
        lines.append("")
        lines.append("listener \(port) \(configuration.bindAddress)")
        if let tlsPort, let certificates {
            lines += [
                "",
                "listener \(tlsPort) \(configuration.bindAddress)",
                "cafile \(certificates.caFile)",
                "certfile \(certificates.serverCertFile)",
                "keyfile \(certificates.serverKeyFile)",
                "require_certificate \(configuration.requireClientCertificate)",
            ]
        }
        // Unix socket listeners (mosquitto 2.0.11 listens on each with a backlog of 10).
        for path in unixSocketPaths { lines += ["", "listener 0 \(path)"] }
        lines += configuration.extraConfiguration
        return lines.joined(separator: "\n") + "\n"
    }
}

extension MosquittoBroker.Configuration {
    /// The mosquitto.conf this configuration produces for `port` (plain listener, and Unix
    /// socket listeners at `unixSocketPaths`).
    public func generatedText(port: Int, unixSocketPaths: [String] = []) -> String {
        MosquittoBroker.configurationText(
            self, port: port, tlsPort: nil, certificates: nil, passwordFile: nil,
            unixSocketPaths: unixSocketPaths)
    }
}
