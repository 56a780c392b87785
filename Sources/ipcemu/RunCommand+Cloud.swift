import ArgumentParser
import CallRuntime
import CloudLink
import ControlAPI
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport
import TuyaCloud

/// Which cloud `ipcemu run --cloud` joins.
enum CloudKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Tuya's cloud (PROTOCOL.md 9), or a private one / the local stand-in with --iotdns and --cloud-ca.
    case tuya
}

/// `HOST:PORT` of an iotdns service (PROTOCOL.md 9.1: "a device must also accept an overridden
/// iotdns address").
struct IotDNSAddress: ExpressibleByArgument, Sendable {
    var host: String
    var port: Int

    /// From the profile's `cloud.iotdnsURL` (`https://host[:port][/...]` or `host:port`).
    init?(url: String) {
        var rest = Substring(url)
        if rest.hasPrefix("https://") { rest = rest.dropFirst("https://".count) }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        guard !rest.isEmpty else { return nil }
        self.init(argument: rest.contains(":") ? String(rest) : String(rest) + ":443")
    }

    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":"), let port = Int(argument[argument.index(after: colon)...]),
              (1...65535).contains(port), colon != argument.startIndex else { return nil }
        host = String(argument[..<colon])
        self.port = port
    }
}

/// The options of `ipcemu run` for joining a cloud (PROTOCOL.md 9, issue 21).
struct CloudRunOptions: ParsableArguments {
    @Option(help: "Join a cloud as a device instead of a broker: tuya (pair with the QR code it prints, also on the web console with --control, activate, then run on the cloud's broker).")
    var cloud: CloudKind?

    @Option(help: "Tuya licence: the device's uuid (from the Tuya IoT platform).")
    var uuid: String?

    @Option(help: "Tuya licence: the authkey issued with the uuid (32 characters).")
    var authkey: String?

    @Option(help: "Tuya product id (productKey, the `p` of the QR code).")
    var productKey: String?

    @Option(help: "Folder for the cloud state (region, endpoints, activation; one JSON file, mode 0600). Default: ~/.local/state/ipcemu/tuya/<uuid>.")
    var stateDir: String?

    @Option(help: "iotdns address HOST:PORT instead of Tuya's h2.iot-dns.com:443 (private clouds, tests).")
    var iotdns: IotDNSAddress?

    @Option(help: "CA certificate (PEM or DER) iotdns is pinned to (default: the system's CAs; the SDK pins its own certificate).")
    var cloudCa: String?

    @Option(help: "softVer reported at activation and in versions.update.")
    var softwareVersion: String = "1.0.0"

    func validate() throws {
        guard cloud != nil else {
            if uuid != nil || authkey != nil || productKey != nil || iotdns != nil || cloudCa != nil {
                throw ValidationError("--uuid, --authkey, --product-key, --iotdns and --cloud-ca need --cloud tuya")
            }
            return
        }
    }

    /// The licence from the flags, each missing one from the profile's `cloud` section.
    func licence(profile: DeviceProfile.Cloud?) throws -> TuyaLicence {
        guard let uuid = uuid ?? profile?.uuid, let authkey = authkey ?? profile?.authkey,
              let productKey = productKey ?? profile?.productKey else {
            throw ValidationError("--cloud tuya needs the licence from the Tuya IoT platform: --uuid, --authkey and --product-key, or the profile's cloud section (productKey, uuid, authkey)")
        }
        do {
            return try TuyaLicence(productKey: productKey, uuid: uuid, authkey: authkey)
        } catch {
            throw ValidationError("licence: \(error)")
        }
    }

    func stateDirectory(uuid: String, profile: DeviceProfile.Cloud?) -> String {
        Self.stateDirectory(stateDir ?? profile?.stateDir, uuid: uuid)
    }

    /// `stateDir`, or the default folder of `uuid` (under $XDG_STATE_HOME, else ~/.local/state).
    static func stateDirectory(_ stateDir: String?, uuid: String) -> String {
        if let stateDir { return stateDir }
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return base + "/ipcemu/tuya/" + uuid
    }
}

extension RunCommand {
    /// `ipcemu run --cloud tuya`: the join runner (PROTOCOL.md 9) until the device link is up, then
    /// the device on that link; again after every reconnect, and from pairing after an unbind.
    func runOnCloud(_ kind: CloudKind) async throws {
        var profile = try loadProfile(self.profile)
        if profile.isTemplate { profile = try profile.instance(index: 0) }
        if let answer { profile.behaviour.answerPolicy = answer.policy }
        if let liveViewLimit { profile.capabilities.liveViewLimit = max(0, liveViewLimit) }
        let log = logOptions.makeLog()
        for warning in profile.warnings { log.log(.warning, "profile: \(warning)") }
        if broker != nil { log.log(.warning, "--broker is ignored with --cloud: the cloud names its broker") }
        try StartupChecks.camera(of: profile)

        let licence = try cloudOptions.licence(profile: profile.cloud)
        var iotdnsCA: [UInt8]?
        if let path = cloudOptions.cloudCa ?? profile.cloud?.iotdnsCAFile {
            do { iotdnsCA = try CloudCAFile.der(fromFile: path) } catch { throw ValidationError("--cloud-ca: \(error)") }
        }
        var server = IotDNSServer.tuya
        if let address = cloudOptions.iotdns ?? profile.cloud?.iotdnsURL.flatMap(IotDNSAddress.init(url:)) {
            server = IotDNSServer(host: address.host, port: address.port)
        }
        server.caDER = iotdnsCA
        // PROTOCOL.md 8.7, 9.3: the skill built from the profile is uploaded after activation.
        let join = CloudJoinConfig(licence: licence, softwareVersion: cloudOptions.softwareVersion, iotdns: server,
                                   skill: profile.skill.jsonString)
        let stateStore = CloudStateStore(directory: cloudOptions.stateDirectory(uuid: licence.uuid, profile: profile.cloud),
                                         uuid: licence.uuid)
        let runner = CloudJoinRunner(configuration: .init(
            // No last will on the device link: the SDK's CONNECT has none, and Tuya's broker may
            // refuse one on a topic outside its ACL, which would read as CONNACK 5 (unpaired). The
            // device still publishes its online status itself (PROTOCOL.md 1) where the broker allows.
            join: join, stateStore: stateStore, iotdnsCA: iotdnsCA, deviceLinkWill: { _ in nil }))
        log.log(.info, "joining Tuya's cloud", fields: [
            ("uuid", licence.uuid), ("productKey", licence.productKey), ("iotdns", "\(server.host):\(server.port)"),
            ("stateFile", stateStore.path),
        ])

        // --control: the API and console are up before the join starts (the pairing QR code is
        // shown there too); the device is registered at each join.
        let record = CloudConsoleRecord(uuid: licence.uuid, productKey: licence.productKey, iotdns: "\(server.host):\(server.port)")
        let control = try await CloudControl.start(controlOptions, record: record, runner: runner, log: log)

        MediaPreparation.enable()
        MediaPreparation.setProcessLiveViewLimit(maxLiveView)
        let session = CloudDeviceSession(profile: profile, productKey: licence.productKey, log: log, registry: control?.registry)
        let pump = Task {
            for await event in runner.events {
                record.note(event)
                await session.handle(event)
            }
        }
        await runner.start()
        let signal = await waitForTerminationSignal(exitDeadline: seconds(shutdownDeadline))
        log.log(.info, "shutting down", fields: [("signal", signalName(signal))])
        await session.stop()
        await runner.stop()
        pump.cancel()
        await control?.stop()
    }
}

/// The device on the cloud's link: made at every `.joined`, stopped at `.left` and at shutdown.
actor CloudDeviceSession {
    let profile: DeviceProfile
    let productKey: String
    let log: EventLog
    /// The control API's registry (`--control`, `--journal`): the device is in it while it runs.
    let registry: DeviceRegistry?
    private var device: Device?
    private var stopped = false

    init(profile: DeviceProfile, productKey: String, log: EventLog, registry: DeviceRegistry? = nil) {
        self.profile = profile
        self.productKey = productKey
        self.log = log
        self.registry = registry
    }

    /// Stops the running device and takes it out of the registry.
    private func stopDevice() async {
        guard let running = device else { return }
        device = nil
        await running.stop()
        await registry?.remove(running.devId)
    }

    func handle(_ event: CloudRunnerEvent) async {
        switch event {
        case .pairing(let url):
            say("\n" + TerminalQRCode.render(url: url))
            log.log(.info, "cloud: waiting for pairing", fields: [("url", url)])
        case .pairingDone:
            log.log(.info, "cloud: paired")
        case .joined(let identity, let link, _):
            guard !stopped else { return }
            await stopDevice()
            let cloudProfile = profile.onCloud(identity, productKey: productKey)
            do {
                // DP reports matched to the product's schema (issue 21); pv2.2 as the SDK writes it.
                let schema = identity.dataPoints.isEmpty ? nil : Set(identity.dataPoints.map(\.id))
                let device = try Device(profile: cloudProfile, transport: link, log: log,
                                        cloud: DeviceCloudOptions(schemaDataPoints: schema))
                // Registered before it starts, so the journal and the console miss no event.
                do { try await registry?.add(device) } catch {
                    log.log(.warning, "cloud: the control API cannot show the device: \(error.message)")
                }
                try await device.start()
                self.device = device
                log.log(.info, "cloud: the device is online on the cloud", fields: [
                    ("devId", identity.devId), ("broker", "\(identity.mqttHost):\(identity.mqttPort)"),
                    ("schemaDPs", "\(identity.dataPoints.count)"),
                ])
            } catch {
                await registry?.remove(identity.devId)
                log.log(.error, "cloud: cannot run the device on the cloud link: \(error)")
            }
        case .left(let why):
            log.log(.warning, "cloud: device link down: \(why)")
            await stopDevice()
        case .log(let level, let text):
            log.log(LogLevel(rawValue: level.rawValue) ?? .info, "cloud: " + text)
        }
    }

    func stop() async {
        stopped = true
        await stopDevice()
    }
}
