import ArgumentParser
import Emulator
import MQTTTransport

/// `ipcemu fleet` without `--broker`: private mosquitto processes, as many as the descriptor limit
/// needs (mosquitto holds one descriptor per client and inherits the fleet's raised limit), or
/// `--private-brokers K`. Each is a `BrokerService` of the fleet's group: stopped last, after every
/// device published its offline status through it (docs/fleet.md "Several brokers").
extension FleetCommand {
    /// Starts the private brokers (none with --broker); one that cannot start stops the others.
    func startPrivateBrokers(devices: Int, budget: DescriptorBudget, output: FleetOutput) throws -> [MosquittoBroker] {
        guard broker.isEmpty else { return [] }
        let count = privateBrokers ?? FleetBrokerList.privateBrokersNeeded(devices: devices, descriptorLimit: budget.limit)
        var started: [MosquittoBroker] = []
        for _ in 0..<count {
            do {
                started.append(try MosquittoBroker(MosquittoBroker.Configuration(
                    maxQueuedMessages: 1000, extraConfiguration: ["max_connections -1"])))
            } catch {
                for b in started { b.stop() }
                throw ValidationError("cannot start private broker \(started.count + 1) of \(count): \(error)")
            }
        }
        if started.count == 1, let only = started.first {
            output.note("private broker at \(only.url)")
        } else {
            let perBroker = max(0, budget.limit - FleetBrokerList.privateBrokerReserve)
            output.note("\(started.count) private brokers at \(started.map(\.url).joined(separator: ", "))"
                        + (privateBrokers == nil ? " (each holds at most \(perBroker) clients: descriptor limit \(budget.limit))" : ""))
        }
        return started
    }
}
