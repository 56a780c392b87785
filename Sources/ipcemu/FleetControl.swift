import ArgumentParser
import CallRuntime
import ControlAPI
import Emulator
import IPCWire
import MQTTTransport
import ControlAPISpec
import Synchronization

extension ControlOptions {
    /// The control plane of a fleet process: every device in one registry (every per-device route
    /// works for any of them), metrics aggregated unless `perDeviceMetrics`, and one journal file
    /// for the process (`DIR/<label>.jsonl`, the devId on every line). Nil without --control or
    /// --journal.
    func attach(fleet: Fleet, perDeviceMetrics: Bool, label: String) async throws -> RunningFleetControl? {
        guard control != nil || journal != nil else { return nil }
        var file: JournalFile?
        if let journal {
            do { file = try JournalFile(directory: journal, name: label) } catch {
                throw ValidationError("--journal: \(error.message)")
            }
        }
        let registry = DeviceRegistry(metrics: ControlMetrics(perDevice: perDeviceMetrics), fleetJournal: file)
        await registry.setFleet(fleet)
        return RunningFleetControl(options: self, fleet: fleet, registry: registry)
    }
}

/// The fleet's registry and server; devices are registered as soon as the fleet has made them.
final class RunningFleetControl: Sendable {
    let options: ControlOptions
    let fleet: Fleet
    let registry: DeviceRegistry
    /// The server `serve` started (nil before, and without --control).
    private let started = Mutex<ControlServer?>(nil)

    var server: ControlServer? { started.withLock { $0 } }

    init(options: ControlOptions, fleet: Fleet, registry: DeviceRegistry) {
        self.options = options
        self.fleet = fleet
        self.registry = registry
    }

    /// Registers every device and, with --control, starts the server and prints its URL.
    func serve(broker: MQTTClientOptions, log: EventLog, output: FleetOutput) async throws {
        for device in fleet.devices {
            do { try await registry.add(device) } catch { log.log(.error, "control: \(error.message)") }
        }
        guard let control = options.control else { return }
        let configuration: ControlServerConfiguration
        do {
            configuration = try ControlServerConfiguration(address: control, token: options.controlToken)
        } catch {
            throw ValidationError(error.message)
        }
        do {
            let s = try ControlServer(configuration: configuration, registry: registry, phone: nil, log: log)
            try await s.start()
            started.withLock { $0 = s }
            output.note("control API and console at \(s.url)/ (metrics: \(s.url)/metrics)")
        } catch {
            throw ValidationError("--control: \(error.message)")
        }
    }

    func stop() async {
        await server?.stop()
        await registry.close()
    }
}


/// `ipcemu fleet-faults`: fleet-wide faults through a fleet process's control API.
struct FleetFaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-faults", abstract: "Inject faults into every device of a running fleet (control API).",
        discussion: """
            --reconnect-storm SECONDS drops every device's MQTT connection at once without DISCONNECT (the \
            broker publishes every last will); the fleet brings them back after SECONDS plus up to --jitter \
            SECONDS, paced per broker (--connect-window devices connecting at once towards each, a timed-out \
            attempt retried after a jittered exponential back-off), and this prints the fleet's state once \
            every device is back online (stormBackOnline, stormSeconds). SIGUSR1 to the fleet process does \
            the same (SECONDS 0), on its workers too. \
            --suppress-heartbeats FRACTION makes that share of the devices (0 to 1, chosen at random) stop \
            answering heartbeats; 0 restores them. --wake N wakes N random low-power doorbells at once (a wake \
            storm, PROTOCOL.md 8.4); --wake-rate R --seconds S wakes R random ones a second for S seconds. The \
            fleet times every wake (GET /api/fleet: wakesCompleted, wakeLatencyP50Ms/P99Ms; its log at info). \
            Without options it prints the fleet's state.
            """)
    @OptionGroup var api: ControlClientOptions
    @Option(help: ArgumentHelp("Drop every device's MQTT connection and reconnect after SECONDS.", valueName: "SECONDS"))
    var reconnectStorm: Double?
    @Option(help: ArgumentHelp("Spread the reconnects over up to SECONDS more, at random.", valueName: "SECONDS"))
    var jitter: Double = 0
    @Option(help: ArgumentHelp("Share of the devices (0 to 1) that stop answering heartbeats.", valueName: "FRACTION"))
    var suppressHeartbeats: Double?
    @Option(help: ArgumentHelp("Wake N random low-power doorbells at once (a wake storm).", valueName: "N"))
    var wake: Int?
    @Option(help: ArgumentHelp("Wake R random low-power doorbells a second (with --seconds).", valueName: "R"))
    var wakeRate: Double?
    @Option(help: ArgumentHelp("How long --wake-rate goes on.", valueName: "SECONDS"))
    var seconds: Double = 10

    func validate() throws {
        if let wake, !(0...1_000_000).contains(wake) { throw ValidationError("--wake must be 0 to 1000000, got \(wake)") }
        if let wakeRate, !(wakeRate > 0 && wakeRate <= 100_000) {
            throw ValidationError("--wake-rate must be a number of wakes a second greater than 0 and at most 100000")
        }
        guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be greater than 0 and at most 86400") }
    }

    func run() async throws {
        try await runControl {
            let client = try api.client()
            if let reconnectStorm {
                try await Self.reconnectStorm(seconds: reconnectStorm, jitter: jitter, client: client)
            }
            if let suppressHeartbeats {
                let body = Components.Schemas.FleetHeartbeatsRequest(suppressFraction: suppressHeartbeats)
                printJSON(try await client.call("PUT /api/fleet/faults/heartbeats") {
                    try await $0.fleetSuppressHeartbeats(body: .json(body)).ok.body.json
                })
            }
            if let wake {
                printJSON(try await Self.wake(wake, client: client))
            }
            if let wakeRate {
                printJSON(try await Self.wake(rate: wakeRate, seconds: seconds, client: client))
            }
            if reconnectStorm == nil, suppressHeartbeats == nil, wake == nil, wakeRate == nil {
                printJSON(try await client.call("GET /api/fleet") { try await $0.getFleet().ok.body.json })
            }
        }
    }
}
