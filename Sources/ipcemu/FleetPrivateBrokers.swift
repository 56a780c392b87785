import ArgumentParser
import Emulator
import MQTTTransport

/// `ipcemu fleet` without `--broker`: private mosquitto processes, as many as the descriptor limit
/// needs (mosquitto holds one descriptor per client and inherits the fleet's raised limit), or
/// `--private-brokers K`. Each is a `BrokerService` of the fleet's group: stopped last, after every
/// device published its offline status through it (docs/fleet.md "Several brokers").
extension FleetCommand {
    /// Starts the private brokers (none with --broker); one that cannot start stops the others.
    /// Each has as many listeners for devices as its share of the devices needs
    /// (`listenersNeeded`): Unix sockets by default (a group per fleet process), TCP ports with
    /// `--private-broker-transport tcp` or `--source-ip`; the fleet's broker list is every one of
    /// them, broker by broker.
    func startPrivateBrokers(devices: Int, processes: Int = 1, budget: DescriptorBudget,
                             output: FleetOutput) throws -> [PrivateBroker] {
        guard broker.isEmpty else { return [] }
        let count = privateBrokers ?? FleetBrokerList.privateBrokersNeeded(devices: devices, descriptorLimit: budget.limit)
        let listeners = Self.listenersNeeded(devicesPerBroker: (devices + count - 1) / max(1, count))
        let transport = privateBrokerTransportChosen
        var started: [PrivateBroker] = []
        for _ in 0..<count {
            do {
                started.append(try PrivateBroker(listeners: listeners, transport: transport, processes: processes,
                                                 maxQueuedMessages: 1000))
            } catch {
                for b in started { b.broker.stop() }
                throw ValidationError("cannot start private broker \(started.count + 1) of \(count): \(error)")
            }
        }
        // The first note as it always was (its URLs are the TCP ones apps use); the devices'
        // Unix sockets on a note of their own.
        let ports = listeners > 1 ? " (\(listeners) listener ports each)" : ""
        if started.count == 1, let only = started.first {
            output.note("private broker at \(only.urls.joined(separator: ", "))\(ports)")
        } else {
            let perBroker = max(0, budget.limit - FleetBrokerList.privateBrokerReserve)
            output.note("\(started.count) private brokers at \(started.map(\.broker.url).joined(separator: ", "))\(ports)"
                        + (privateBrokers == nil ? " (each holds at most \(perBroker) clients: descriptor limit \(budget.limit))" : ""))
        }
        if transport == .unix, let first = started.first {
            let total = first.broker.unixSocketPaths.count
            let sockets = "\(total) Unix socket\(total == 1 ? "" : "s")"
            let groups = first.socketGroups
            let shared = groups > 1 ? " (\(listeners) per process\(groups < processes ? ", \(groups) groups of processes" : ""))" : ""
            output.note("devices over " + (started.count == 1
                ? "\(sockets)\(shared) in \(first.broker.directory)"
                : "\(sockets) per broker\(shared), in " + started.map(\.broker.directory).joined(separator: ", ")))
        }
        return started
    }

    /// The private brokers' transport for devices: `--private-broker-transport`, else Unix
    /// sockets, or TCP when `--source-ip` asks for source addresses (which only TCP has). With a
    /// group of sockets per process and the quick retry at a full backlog, 100,000 devices came
    /// online and back from a storm faster over Unix sockets than over TCP, with no retries
    /// (docs/fleet.md "Devices over Unix sockets").
    var privateBrokerTransportChosen: PrivateBrokerTransport {
        privateBrokerTransport ?? (sourceIP == nil ? .unix : .tcp)
    }

    /// Connections towards one listener (address and port) at most, by design: past a few
    /// thousand from one source address, the kernel's search for a free ephemeral port at each
    /// connect (`__inet_hash_connect`, checking every candidate's 4-tuple) took a quarter of the
    /// machine's CPU at 20,000 devices on one port (docs/fleet.md "100,000 devices on one host").
    /// Unix sockets have no ports; they keep the same count per process (each process has sockets
    /// of its own: `PrivateBroker.socketGroupsLimit`).
    static let devicesPerListener = 5000

    static func listenersNeeded(devicesPerBroker: Int) -> Int {
        max(1, min(16, (devicesPerBroker + devicesPerListener - 1) / devicesPerListener))
    }
}

/// How a fleet's devices reach its private brokers (`--private-broker-transport`).
enum PrivateBrokerTransport: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Loopback TCP ports (`mqtt://127.0.0.1:PORT`).
    case tcp
    /// Unix domain sockets in the broker's private directory (`unix:///…/mqtt-0.sock`): no
    /// handshake, no ACK segments, no TIME_WAIT, no ephemeral port search.
    case unix
}

/// A private mosquitto listening on one or more loopback ports (all the same broker: a device on
/// any of them reaches every other), and, when its devices use them, on Unix sockets: as many as
/// the TCP listeners for each fleet process (a group of sockets per process).
struct PrivateBroker: Sendable {
    let broker: MosquittoBroker
    /// `mqtt://HOST:PORT` of every TCP listener, the broker's own port first: what apps and people
    /// connect to (and, over TCP, the devices).
    let urls: [String]
    /// Groups of Unix sockets (1 over TCP): fleet process p uses group `p % socketGroups`.
    let socketGroups: Int

    /// At most this many Unix sockets per broker (the groups shrink to fit; processes then share).
    static let socketsLimit = 64

    /// Why a group per process: mosquitto 2.0.11 listens on a Unix socket with a backlog of 10
    /// (hard-coded), and a full backlog fails the nonblocking connect with `EAGAIN`. With one
    /// socket per listener shared by every process, 6 processes x a window of 10 aimed ~60
    /// connects at each socket: a third of all connects failed so at 100,000 devices (perf count
    /// of `connect` returning -11, docs/fleet.md "Devices over Unix sockets"). One process's window
    /// of 10 per socket fits the backlog.
    static func socketGroups(listeners: Int, processes: Int) -> Int {
        max(1, min(max(1, processes), socketsLimit / max(1, listeners)))
    }

    init(listeners: Int, transport: PrivateBrokerTransport = .tcp, processes: Int = 1, maxInflightMessages: Int = 100,
         maxQueuedMessages: Int) throws {
        var extra: [Int] = []
        var lines = ["max_connections -1"]
        for _ in 1..<max(1, listeners) {
            var port = try LoopbackPort.free()
            while extra.contains(port) { port = try LoopbackPort.free() }
            extra.append(port)
            lines += ["", "listener \(port) 127.0.0.1", "max_connections -1"]
        }
        // No line per connect and disconnect: at fleet scale mosquitto spent its CPU on them. Over
        // Unix sockets no warning either: mosquitto 2.0.11 logs one per socket it accepts there
        // (it cannot set TCP_NODELAY on it).
        let unix = transport == .unix
        let listeners = max(1, listeners)
        socketGroups = unix ? Self.socketGroups(listeners: listeners, processes: processes) : 1
        broker = try MosquittoBroker(MosquittoBroker.Configuration(
            maxInflightMessages: maxInflightMessages, maxQueuedMessages: maxQueuedMessages, logsConnections: false,
            logsWarnings: !unix, unixSockets: unix ? listeners * socketGroups : 0, extraConfiguration: lines))
        let host = broker.host
        urls = [broker.url] + extra.map { "mqtt://\(host):\($0)" }
    }

    /// What fleet process `process` (0: the one holding the first block) connects its devices to,
    /// in the same order as `urls` (device i of either list reaches the same broker): `urls` over
    /// TCP, else `unix:///PATH` of its group's Unix sockets, one per TCP listener.
    func deviceURLs(process: Int = 0) -> [String] {
        let paths = broker.unixSocketPaths
        guard !paths.isEmpty else { return urls }
        let group = max(0, process) % socketGroups
        return (0..<urls.count).map { MQTTBrokerEndpoint.unixURL(path: paths[group * urls.count + $0]) }
    }
}
