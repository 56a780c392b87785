import ArgumentParser
import CallRuntime
import ControlAPI
import Emulator
import MQTTTransport

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

    /// Starts the journal and, with --control, the server and its console phone. Prints the URL.
    func start(device: Device, broker: MQTTClientOptions, log: EventLog) async throws -> RunningControl? {
        guard control != nil || journal != nil else { return nil }
        let registry = DeviceRegistry(journalDirectory: journal)
        do {
            try await registry.add(device)
        } catch {
            throw ValidationError("--journal: \(error.message)")
        }
        guard let control else { return RunningControl(registry: registry, server: nil, phone: nil) }
        let configuration: ControlServerConfiguration
        do {
            configuration = try ControlServerConfiguration(address: control, token: controlToken)
        } catch {
            throw ValidationError(error.message)
        }
        var phone: ConsolePhone?
        if let user = consoleUser ?? device.profile.behaviour.household.first {
            let p = try ConsolePhone(userId: user, connection: broker, hub: registry.hub, log: log)
            do {
                try await p.start(devices: [device])
                phone = p
            } catch {
                log.log(.warning, "console phone not started: \(error)")
            }
        }
        let server: ControlServer
        do {
            server = try ControlServer(configuration: configuration, registry: registry, phone: phone, log: log)
            try await server.start()
        } catch {
            await phone?.stop()
            throw ValidationError("--control: \(error.message)")
        }
        say("  Control API and console: \(server.url)/   (metrics: \(server.url)/metrics)")
        return RunningControl(registry: registry, server: server, phone: phone)
    }
}

/// What `ControlOptions.start` started; `stop` ends it in order.
struct RunningControl {
    let registry: DeviceRegistry
    let server: ControlServer?
    let phone: ConsolePhone?

    func stop() async {
        await server?.stop()
        await phone?.stop()
        await registry.close()
    }
}
