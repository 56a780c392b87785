import ArgumentParser
import CallRuntime
import CloudLink
import DeviceProfile
import Emulator
import Foundation
import TuyaCloud

/// The options of `ipcemu fleet` for a fleet on a cloud (issue 21 item 5, docs/tuya-cloud.md
/// "Fleets on the cloud"): one device per licence of a CSV file.
struct CloudFleetOptions: ParsableArguments {
    @Option(help: "Run the fleet on a cloud instead of a broker: tuya (one device per licence of --licences, each paired, activated and joined as `ipcemu run --cloud tuya` does).")
    var cloud: CloudKind?

    @Option(help: ArgumentHelp(
        "Licence file: uuid,authkey per line (a header line uuid,authkey allowed, # comments); one device per line.",
        valueName: "FILE.csv"))
    var licences: String?

    @Option(help: "Tuya product id of every licence (default: the profile's cloud.productKey).")
    var productKey: String?

    @Option(help: "Folder under which each device keeps its cloud state, in a folder named by its uuid. Default: ~/.local/state/ipcemu/tuya (as run's default, per uuid).")
    var stateDir: String?

    @Option(help: "iotdns address HOST:PORT instead of Tuya's h2.iot-dns.com:443 (private clouds, tests).")
    var iotdns: IotDNSAddress?

    @Option(help: "CA certificate (PEM or DER) iotdns is pinned to (default: the profile's cloud.iotdnsCAFile, else the system's CAs).")
    var cloudCa: String?

    @Option(help: ArgumentHelp(
        "Join requests (iotdns and activation) the fleet sends the cloud per second, over all its devices; a refused device backs off on its own.",
        valueName: "R"))
    var activationsPerSecond: Double = 2

    @Option(help: "softVer reported at activation and in versions.update.")
    var softwareVersion: String = "1.0.0"

    func validate() throws {
        guard cloud != nil else {
            if licences != nil || productKey != nil || stateDir != nil || iotdns != nil || cloudCa != nil {
                throw ValidationError("--licences, --product-key, --state-dir, --iotdns and --cloud-ca need --cloud tuya")
            }
            return
        }
        guard licences != nil else { throw ValidationError("--cloud tuya needs --licences FILE.csv (uuid,authkey per line)") }
        guard activationsPerSecond > 0, activationsPerSecond.isFinite, activationsPerSecond <= 1000 else {
            throw ValidationError("--activations-per-second must be a number greater than 0 and at most 1000")
        }
    }

    /// The state folder of `uuid`: `--state-dir`/uuid, else run's default folder of that uuid.
    func stateDirectory(uuid: String, profile: DeviceProfile.Cloud?) -> String {
        if let root = stateDir ?? profile?.stateDir {
            return (root.hasSuffix("/") ? root : root + "/") + uuid
        }
        return CloudRunOptions.stateDirectory(nil, uuid: uuid)
    }
}

extension FleetCommand {
    /// `ipcemu fleet --cloud tuya --licences FILE.csv`: one `CloudJoinRunner` + `Device` per
    /// licence (`CloudFleet`), the joins paced over all devices; progress while they join, a summary
    /// at the end.
    func runOnCloud(_ kind: CloudKind) async throws {
        guard profiles.count == 1, let spec = profiles.first else {
            throw ValidationError("--cloud takes one --profile FILE: every licence runs that profile")
        }
        if count != nil || shard != nil || block != nil {
            throw ValidationError("--count, --shard and --block do not apply with --cloud: the fleet is one device per licence")
        }
        let file = spec.lastIndex(of: ":").flatMap { Int(spec[spec.index(after: $0)...]) != nil ? String(spec[..<$0]) : nil } ?? spec
        let template = try loadProfile(file)
        let log = makeLog()
        let output = FleetOutput(json: json)
        for warning in template.warnings { log.log(.warning, "profile: \(warning)") }
        if broker != nil { output.note("--broker is ignored with --cloud: the cloud names its broker") }
        try StartupChecks.camera(of: template)

        guard let productKey = cloudOptions.productKey ?? template.cloud?.productKey else {
            throw ValidationError("--cloud tuya needs the product id: --product-key or the profile's cloud.productKey")
        }
        let path = cloudOptions.licences ?? ""
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("--licences \(path): cannot read it: \(error.localizedDescription)")
        }
        let licences: [TuyaLicence]
        do {
            licences = try CloudFleetLicences.parse(text, productKey: productKey)
        } catch {
            throw ValidationError("--licences \(path): \(error)")
        }
        var iotdnsCA: [UInt8]?
        if let caPath = cloudOptions.cloudCa ?? template.cloud?.iotdnsCAFile {
            do { iotdnsCA = try CloudCAFile.der(fromFile: caPath) } catch { throw ValidationError("--cloud-ca: \(error)") }
        }
        var server = IotDNSServer.tuya
        if let address = cloudOptions.iotdns ?? template.cloud?.iotdnsURL.flatMap(IotDNSAddress.init(url:)) {
            server = IotDNSServer(host: address.host, port: address.port)
        }
        server.caDER = iotdnsCA

        var profiles: [DeviceProfile] = []
        for index in licences.indices {
            var profile = template.isTemplate ? try instance(template, index: start + index) : template
            if let answer { profile.behaviour.answerPolicy = answer.policy }
            profiles.append(profile)
        }
        let members = licences.map {
            CloudFleet.Member(licence: $0, stateDirectory: cloudOptions.stateDirectory(uuid: $0.uuid, profile: template.cloud))
        }
        MediaPreparation.enable()
        let began = ContinuousClock.now
        let devices = CloudFleetDevices(profiles: profiles, members: members, productKey: productKey, log: log, output: output)
        let fleet = CloudFleet(configuration: .init(
            members: members, softwareVersion: cloudOptions.softwareVersion, iotdns: server, iotdnsCA: iotdnsCA,
            skill: template.skill.jsonString, activationsPerSecond: cloudOptions.activationsPerSecond
        ), paced: { index, purpose in
            guard members.indices.contains(index) else { return }
            output.cloudPaced(uuid: members[index].licence.uuid, purpose: purpose, elapsed: ContinuousClock.now - began, log: log)
        }) { index, event in
            await devices.handle(event, of: index)
        }
        output.note(String(format: "cloud %@: %d licences of product %@, joins paced at %g per second, iotdns %@:%d",
                           kind.rawValue, licences.count, productKey, cloudOptions.activationsPerSecond, server.host, server.port))
        let progress = Task {
            var allJoined = false
            for await counts in fleet.changes {
                let elapsed = ContinuousClock.now - began
                output.cloudProgress(counts, elapsed: elapsed)
                if counts.joined == counts.total, !allJoined {
                    allJoined = true
                    output.cloudOnline(counts, elapsed: elapsed, perSecond: cloudOptions.activationsPerSecond)
                }
                // At most a few lines a second, however large the fleet (the stream keeps the newest).
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        await fleet.start()
        let signal = await waitForTerminationSignal(exitDeadline: seconds(shutdownDeadline))
        output.note("shutting down (\(signalName(signal))): publishing offline, closing the cloud links")
        let stopping = ContinuousClock.now
        let counts = await fleet.counts()
        let stopped = await devices.stop()
        await fleet.stop()
        progress.cancel()
        output.cloudSummary(counts, admitted: await fleet.pacer.admitted)
        output.stopped(devices: stopped, took: ContinuousClock.now - stopping)
    }

    private func instance(_ template: DeviceProfile, index: Int) throws -> DeviceProfile {
        do { return try template.instance(index: index) } catch { throw ValidationError("--profile: \(error)") }
    }
}

/// The devices of a cloud fleet: one made at each member's `.joined`, stopped at `.left` and at
/// shutdown (as `CloudDeviceSession` does for `run`, without the terminal QR code: the pairing URL
/// is printed per device).
actor CloudFleetDevices {
    let profiles: [DeviceProfile]
    let members: [CloudFleet.Member]
    let productKey: String
    let log: EventLog
    let output: FleetOutput
    private var devices: [Int: Device] = [:]
    private var stopped = false

    init(profiles: [DeviceProfile], members: [CloudFleet.Member], productKey: String, log: EventLog, output: FleetOutput) {
        self.profiles = profiles
        self.members = members
        self.productKey = productKey
        self.log = log
        self.output = output
    }

    func handle(_ event: CloudRunnerEvent, of index: Int) async {
        guard profiles.indices.contains(index), members.indices.contains(index) else { return }
        let uuid = members[index].licence.uuid
        switch event {
        case .pairing(let url):
            output.cloudPairing(uuid: uuid, url: url)
        case .pairingDone:
            log.log(.info, "cloud: paired", fields: [("uuid", uuid)])
        case .joined(let identity, let link, _):
            guard !stopped else { return }
            await devices.removeValue(forKey: index)?.stop()
            let profile = profiles[index].onCloud(identity, productKey: productKey)
            do {
                let schema = identity.dataPoints.isEmpty ? nil : Set(identity.dataPoints.map(\.id))
                let device = try Device(profile: profile, transport: link, log: log,
                                        cloud: DeviceCloudOptions(schemaDataPoints: schema))
                try await device.start()
                devices[index] = device
                log.log(.info, "cloud: the device is online on the cloud", fields: [
                    ("uuid", uuid), ("devId", identity.devId), ("broker", "\(identity.mqttHost):\(identity.mqttPort)"),
                ])
            } catch {
                log.log(.error, "cloud: cannot run the device on the cloud link: \(error)", fields: [("uuid", uuid)])
            }
        case .left(let why):
            log.log(.warning, "cloud: device link down: \(why)", fields: [("uuid", uuid)])
            await devices.removeValue(forKey: index)?.stop()
        case .log(let level, let text):
            let level = LogLevel(rawValue: level.rawValue) ?? .info
            log.log(level, "cloud: " + text, fields: [("uuid", uuid)])
            if level == .error { output.cloudRefused(uuid: uuid, why: text) }
        }
    }

    /// Stops every device (each publishes its offline status); how many there were.
    func stop() async -> Int {
        stopped = true
        let running = devices
        devices.removeAll()
        await withTaskGroup(of: Void.self) { group in
            for (_, device) in running { group.addTask { await device.stop() } }
        }
        return running.count
    }
}

extension FleetOutput {
    func cloudProgress(_ c: CloudFleetCounts, elapsed: Duration) {
        if json {
            say(#"{"event":"cloud","total":\#(c.total),"joined":\#(c.joined),"paired":\#(c.paired),"waitingForToken":\#(c.waitingForToken),"refused":\#(c.refused),"joining":\#(c.joining),"seconds":\#(format(elapsed))}"#)
        } else {
            say("fleet: \(c.joined)/\(c.total) joined, \(c.paired) paired, \(c.waitingForToken) waiting for a token, \(c.refused) refused, \(c.joining) joining (\(format(elapsed)) s)")
        }
    }

    func cloudOnline(_ c: CloudFleetCounts, elapsed: Duration, perSecond: Double) {
        if json {
            say(#"{"event":"online","online":\#(c.joined),"planned":\#(c.total),"seconds":\#(format(elapsed)),"cloud":"tuya","activationsPerSecond":\#(perSecond)}"#)
        } else {
            say("fleet: \(c.joined) of \(c.total) devices online on the cloud in \(format(elapsed)) s")
        }
    }

    /// A paced join request let through: a JSON line with --json (the pacing as measured), else a debug log line.
    func cloudPaced(uuid: String, purpose: HTTPSRequest.Purpose, elapsed: Duration, log: EventLog) {
        if json {
            say(#"{"event":"paced","uuid":"\#(escape(uuid))","request":"\#(purpose.rawValue)","seconds":\#(format(elapsed))}"#)
        } else {
            log.log(.debug, "cloud: \(purpose.rawValue) request let through at \(format(elapsed)) s", fields: [("uuid", uuid)])
        }
    }

    func cloudPairing(uuid: String, url: String) {
        if json {
            say(#"{"event":"pairing","uuid":"\#(escape(uuid))","url":"\#(escape(url))"}"#)
        } else {
            say("fleet: \(uuid) waiting for a token: pair it with \(url)")
        }
    }

    func cloudRefused(uuid: String, why: String) {
        if json {
            say(#"{"event":"refused","uuid":"\#(escape(uuid))","reason":"\#(escape(why))"}"#)
        } else {
            say("fleet: \(uuid) refused: \(why)")
        }
    }

    func cloudSummary(_ c: CloudFleetCounts, admitted: Int) {
        if json {
            say(#"{"event":"summary","total":\#(c.total),"joined":\#(c.joined),"paired":\#(c.paired),"waitingForToken":\#(c.waitingForToken),"refused":\#(c.refused),"joining":\#(c.joining),"pacedRequests":\#(admitted)}"#)
        } else {
            say("fleet: summary: \(c.total) licences, \(c.joined) joined, \(c.paired) paired, \(c.waitingForToken) waiting for a token, \(c.refused) refused, \(c.joining) joining; \(admitted) paced join requests")
        }
    }
}
