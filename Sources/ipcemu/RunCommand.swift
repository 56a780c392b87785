import ArgumentParser
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport
import ServiceLifecycle

/// `ipcemu run`: one device, until SIGTERM/SIGINT.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run one emulated device.",
        discussion: """
            Connects the device of --profile to a broker, publishes its retained meta and online \
            status, answers capability probes and takes and makes calls. Without --broker (and no \
            broker.url in the profile) it starts a private mosquitto on a free loopback port and prints \
            the command that calls the device. Everything that can fail (camera, broker, journal \
            folder, --control address) is checked before the device goes online. SIGTERM or SIGINT \
            shuts down in order: the device ends any call (reason shutdown) and publishes offline, \
            the journal is finished, then the control API and the private broker stop; exit 0. \
            Past --shutdown-deadline the process exits anyway; a second signal exits at once.
            """
    )

    @Option(help: "Device profile (YAML), e.g. device-profiles/doorbell.yaml.")
    var profile: String

    @Option(help: "Broker URL: mqtt://host:port or mqtts://host:port. Default: the profile's, else a private broker.")
    var broker: String?

    @Option(help: "Answer policy override (default: the profile's); auto is answer, :SECONDS answers or rejects after SECONDS.")
    var answer: AnswerPolicyOption?

    @Option(help: "CA file for mqtts (default: the profile's broker.caFile, else the system CAs).")
    var caFile: String?

    @Option(help: "Address the private broker listens on (default 127.0.0.1; 0.0.0.0 lets a phone on the LAN in).")
    var bindAddress: String = "127.0.0.1"

    @Option(help: "Live-view links (without an answered call) this process may have open at once; a call's link never counts. Also capped per device by the profile's capabilities.liveViewLimit.")
    var maxLiveView: Int = 64

    @Option(help: "Override the profile's capabilities.liveViewLimit (live-view links per device).")
    var liveViewLimit: Int?

    @Option(help: ArgumentHelp(
        "Seconds a shutdown (SIGTERM/SIGINT) may take before the process exits anyway (status 1); a second signal exits at once.",
        valueName: "SECONDS"))
    var shutdownDeadline: Double = 10

    @OptionGroup var logOptions: LogOptions

    @OptionGroup(title: "Control API, console and journal") var controlOptions: ControlOptions

    @OptionGroup(title: "Tuya cloud (PROTOCOL.md 9)") var cloudOptions: CloudRunOptions

    func validate() throws {
        guard shutdownDeadline > 0, shutdownDeadline <= 86_400 else {
            throw ValidationError("--shutdown-deadline must be a number of seconds greater than 0 and at most 86400")
        }
    }

    func run() async throws {
        if let cloud = cloudOptions.cloud {
            try await runOnCloud(cloud)
            return
        }
        var profile = try loadProfile(self.profile)
        if profile.isTemplate {
            profile = try profile.instance(index: 0)
        }
        if let answer { profile.behaviour.answerPolicy = answer.policy }
        if let liveViewLimit { profile.capabilities.liveViewLimit = max(0, liveViewLimit) }
        let log = logOptions.makeLog()
        for warning in profile.warnings {
            log.log(.warning, "profile: \(warning)")
        }

        // Start-up: everything that can fail (the camera, the broker, the journal folder, the
        // control address) is checked and bound here, before the device goes online.
        try StartupChecks.camera(of: profile)
        var embedded: MosquittoBroker?
        let brokerURL: String
        if let url = broker ?? profile.broker.url?.description {
            brokerURL = url
        } else {
            do {
                embedded = try MosquittoBroker(MosquittoBroker.Configuration(bindAddress: bindAddress))
            } catch {
                throw ValidationError("cannot start the private broker: \(error)")
            }
            brokerURL = embedded?.url ?? ""
            log.log(.info, "private broker started", fields: [("url", brokerURL)])
        }
        let device: Device
        let control: RunningControl?
        do {
            let options = try connectionOptions(
                brokerURL: brokerURL, clientID: profile.identity.devId,
                caFile: caFile ?? profile.broker.caFile, certFile: profile.broker.certFile, keyFile: profile.broker.keyFile)
            // Plugins loaded now, and a ringing call's video feed started while it rings (issue 11).
            MediaPreparation.enable()
            MediaPreparation.setProcessLiveViewLimit(maxLiveView)
            device = try Device(profile: profile, connection: options, log: log)
            control = try await controlOptions.attach(to: device)
            try await control?.serve(broker: options, log: log)
        } catch {
            embedded?.stop()
            throw error
        }

        // Then the service group: started in this order, shut down in the reverse one.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let embedded { services.append(.init(service: BrokerService(broker: embedded))) }
        if let control {
            services.append(.init(service: ControlServerService(server: control.server, phone: control.phone)))
            services.append(.init(service: JournalService(registry: control.registry)))
        }
        let ready = profile
        let howToCall = { @Sendable (connected: Bool) in printHowToCall(profile: ready, brokerURL: brokerURL, connected: connected) }
        services.append(.init(service: DeviceService(device: device, online: { howToCall($0) })))
        try await ServiceRunner(services: services, deadline: seconds(shutdownDeadline), onSignal: { signal in
            log.log(.info, "shutting down", fields: [("signal", signal)])
        }).run()
    }

    private func printHowToCall(profile: DeviceProfile, brokerURL: String, connected: Bool) {
        let id = profile.identity
        // The binary as it was started (`.build/release/ipcemu`, or `ipcemu` from PATH): copy-pasteable.
        let ipcemu = CommandLine.arguments.first.flatMap { $0.isEmpty ? nil : $0 } ?? "ipcemu"
        let state = connected ? "is online" : "is waiting for the broker (retrying)"
        var lines = [
            "",
            "  \(id.name) (\(id.devId), category \(id.category)) \(state) at \(brokerURL)",
            "",
            "  Probe it:  \(ipcemu) app probe \(id.devId) --broker \(brokerURL) --profile \(self.profile)",
            "  Call it:   \(ipcemu) app call \(id.devId) --broker \(brokerURL) --profile \(self.profile) --hangup-after 5",
        ]
        if let first = profile.behaviour.household.first {
            lines.append("  Be called: \(ipcemu) app listen --user \(first) --broker \(brokerURL) --profile \(self.profile)")
        }
        lines.append("")
        say(lines.joined(separator: "\n"))
    }
}
