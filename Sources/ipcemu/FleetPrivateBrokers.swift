import ArgumentParser
import Emulator
import MQTTTransport

/// `ipcemu fleet` without `--broker`: private mosquitto processes, as many as the descriptor limit
/// needs (mosquitto holds one descriptor per client and inherits the fleet's raised limit), or
/// `--private-brokers K`. Each is a `BrokerService` of the fleet's group: stopped last, after every
/// device published its offline status through it (docs/fleet.md "Several brokers").
extension FleetCommand {
    /// Starts the private brokers (none with --broker); one that cannot start stops the others.
    /// Each listens on as many ports as its share of the devices needs (`listenersNeeded`); the
    /// fleet's broker list is every listener, broker by broker.
    func startPrivateBrokers(devices: Int, budget: DescriptorBudget, output: FleetOutput) throws -> [PrivateBroker] {
        guard broker.isEmpty else { return [] }
        let count = privateBrokers ?? FleetBrokerList.privateBrokersNeeded(devices: devices, descriptorLimit: budget.limit)
        let listeners = Self.listenersNeeded(devicesPerBroker: (devices + count - 1) / max(1, count))
        var started: [PrivateBroker] = []
        for _ in 0..<count {
            do {
                started.append(try PrivateBroker(listeners: listeners, maxQueuedMessages: 1000))
            } catch {
                for b in started { b.broker.stop() }
                throw ValidationError("cannot start private broker \(started.count + 1) of \(count): \(error)")
            }
        }
        let ports = listeners == 1 ? "" : " (\(listeners) listener ports each)"
        if started.count == 1, let only = started.first {
            output.note("private broker at \(only.urls.joined(separator: ", "))\(ports)")
        } else {
            let perBroker = max(0, budget.limit - FleetBrokerList.privateBrokerReserve)
            output.note("\(started.count) private brokers at \(started.map(\.broker.url).joined(separator: ", "))\(ports)"
                        + (privateBrokers == nil ? " (each holds at most \(perBroker) clients: descriptor limit \(budget.limit))" : ""))
        }
        return started
    }

    /// Connections towards one listener (address and port) at most, by design: past a few
    /// thousand from one source address, the kernel's search for a free ephemeral port at each
    /// connect (`__inet_hash_connect`, checking every candidate's 4-tuple) took a quarter of the
    /// machine's CPU at 20,000 devices on one port (docs/fleet.md "100,000 devices on one host").
    static let devicesPerListener = 5000

    static func listenersNeeded(devicesPerBroker: Int) -> Int {
        max(1, min(16, (devicesPerBroker + devicesPerListener - 1) / devicesPerListener))
    }
}

/// A private mosquitto listening on one or more loopback ports (all the same broker: a device on
/// any of them reaches every other).
struct PrivateBroker: Sendable {
    let broker: MosquittoBroker
    /// `mqtt://HOST:PORT` of every listener, the broker's own port first.
    let urls: [String]

    init(listeners: Int, maxInflightMessages: Int = 100, maxQueuedMessages: Int) throws {
        var extra: [Int] = []
        var lines = ["max_connections -1"]
        for _ in 1..<max(1, listeners) {
            var port = try LoopbackPort.free()
            while extra.contains(port) { port = try LoopbackPort.free() }
            extra.append(port)
            lines += ["", "listener \(port) 127.0.0.1", "max_connections -1"]
        }
        // No line per connect and disconnect: at fleet scale mosquitto spent its CPU on them.
        broker = try MosquittoBroker(MosquittoBroker.Configuration(
            maxInflightMessages: maxInflightMessages, maxQueuedMessages: maxQueuedMessages, logsConnections: false,
            extraConfiguration: lines))
        let host = broker.host
        urls = [broker.url] + extra.map { "mqtt://\(host):\($0)" }
    }
}
