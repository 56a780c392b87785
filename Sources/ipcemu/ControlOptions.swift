import ArgumentParser
import CallRuntime
import ControlAPI
import Emulator
import MQTTTransport
import Synchronization

/// `ipcemu run`'s control options: the HTTP API + console (`--control`), its token, the journal.
struct ControlOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Serve the control API, web console and /metrics at HOST:PORT (off unless given; e.g. 127.0.0.1:8080, port 0 picks a free one).",
        valueName: "HOST:PORT"))
    var control: String?

    @Option(help: "Bearer token every control request must carry; required when --control is not a loopback address.")
    var controlToken: String?

    @Option(help: ArgumentHelp("Append every call event and ended call to DIR/<devId>.jsonl (JSON Lines).", valueName: "DIR"))
    var journal: String?

    @Option(help: "User id of the console's phone panel (default: the first of the household).")
    var consoleUser: String?

    func validate() throws {
        if let control {
            do {
                try ControlServerConfiguration(address: control, token: controlToken).validate()
            } catch {
                throw ValidationError(error.message)
            }
        } else if controlToken != nil {
            throw ValidationError("--control-token needs --control HOST:PORT")
        }
    }

    /// Before the device starts: the registry and its journal, so no call event is missed.
    /// Nil when neither --control nor --journal is given.
    func attach(to device: Device) async throws -> RunningControl? {
        guard control != nil || journal != nil else { return nil }
        let registry = DeviceRegistry(journalDirectory: journal)
        do {
            try await registry.add(device)
        } catch {
            throw ValidationError("--journal: \(error.message)")
        }
        return RunningControl(options: self, device: device, registry: registry)
    }
}

/// What `ControlOptions.attach` set up; `serve` starts the server and console phone (with
/// --control), `stop` ends everything in order.
final class RunningControl: Sendable {
    let options: ControlOptions
    let device: Device
    let registry: DeviceRegistry
    /// What `serve` started (nil before, and without --control).
    private let started = Mutex<(server: ControlServer?, phone: ConsolePhone?)>((nil, nil))

    var server: ControlServer? { started.withLock { $0.server } }
    var phone: ConsolePhone? { started.withLock { $0.phone } }

    init(options: ControlOptions, device: Device, registry: DeviceRegistry) {
        self.options = options
        self.device = device
        self.registry = registry
    }

    /// With --control: starts the console phone and the server, and prints the URL.
    func serve(broker: MQTTClientOptions, log: EventLog) async throws {
        guard let control = options.control else { return }
        let configuration: ControlServerConfiguration
        do {
            configuration = try ControlServerConfiguration(address: control, token: options.controlToken)
        } catch {
            throw ValidationError(error.message)
        }
        var broker = broker
        broker.will = nil
        var phone: ConsolePhone?
        if let user = options.consoleUser ?? device.profile.behaviour.household.first {
            do {
                let p = try ConsolePhone(userId: user, connection: broker, hub: registry.hub, log: log)
                try await p.start(devices: [device])
                phone = p
            } catch {
                log.log(.warning, "console phone not started: \(error)")
            }
        }
        do {
            let s = try ControlServer(configuration: configuration, registry: registry, phone: phone, log: log)
            try await s.start()
            started.withLock { $0 = (s, phone) }
            say("  Control API and console: \(s.url)/   (metrics: \(s.url)/metrics)")
        } catch {
            await phone?.stop()
            throw ValidationError("--control: \(error.message)")
        }
    }

    func stop() async {
        await server?.stop()
        await phone?.stop()
        await registry.close()
    }
}
