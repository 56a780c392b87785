import ArgumentParser
import CallRuntime
import CloudLink
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport
import TuyaCloud

/// The options of `ipcemu fleet` for a fleet on a cloud (issue 21 item 5, docs/tuya-cloud.md
/// "Fleets on the cloud"): one device per licence of a CSV file.
struct CloudFleetOptions: ParsableArguments {
    @Option(help: "Run the fleet on a cloud instead of a broker: tuya (one device per licence of --licences, each paired, activated and joined as `ipcemu run --cloud tuya` does).")
    var cloud: CloudKind?

    @Option(help: ArgumentHelp(
        "Licence file: uuid,authkey per line (a header line uuid,authkey allowed, # comments); one device per line. --shard i/N keeps block i of N of the rows; past --max-devices-per-process worker processes hold the other blocks.",
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
        "Join requests (iotdns and activation) the fleet sends the cloud per second, over all its devices (divided among its worker processes); a refused device backs off on its own.",
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
    /// at the end. `--shard i/N` keeps block i of N of the licence rows (as a broker fleet's
    /// positions); when this process cannot hold them all, worker processes hold the other blocks
    /// (`CloudFleetSupervisor`, the same block arithmetic as `FleetSupervisor`), each with its own
    /// runners and state folders, and --activations-per-second divided among the processes.
    func runOnCloud(_ kind: CloudKind) async throws {
        guard profiles.count == 1, let spec = profiles.first else {
            throw ValidationError("--cloud takes one --profile FILE: every licence runs that profile")
        }
        if count != nil {
            throw ValidationError("--count does not apply with --cloud: the fleet is one device per licence")
        }
        let file = spec.lastIndex(of: ":").flatMap { Int(spec[spec.index(after: $0)...]) != nil ? String(spec[..<$0]) : nil } ?? spec
        let template = try loadProfile(file)
        let log = makeLog()
        let output = FleetOutput(json: json)
        for warning in template.warnings { log.log(.warning, "profile: \(warning)") }
        if !broker.isEmpty { output.cloudNote("--broker is ignored with --cloud: the cloud names its broker") }
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

        // The rows this process and its workers hold, and how many processes that takes. A cloud
        // device holds its MQTT link and, while joining, an HTTPS connection: two descriptors.
        let positions = try licenceRows(of: licences.count)
        let budget = DescriptorBudget.raiseToHardLimit()
        let capacity = min(maxDevicesPerProcess ?? Int.max, max(1, budget.clientsThatFit / 2))
        let supervised = block == nil && positions.count > capacity
        let blocks = supervised ? FleetSupervisor.blocks(positions, capacity: capacity) : [positions]
        let own = blocks[0]
        // The cloud's join rate is the fleet's: each process takes its share.
        let perSecond = block == nil ? cloudOptions.activationsPerSecond / Double(blocks.count) : cloudOptions.activationsPerSecond

        var profiles: [DeviceProfile] = []
        for position in own {
            var profile = template.isTemplate ? try instance(template, index: start + position) : template
            if let answer { profile.behaviour.answerPolicy = answer.policy }
            profiles.append(profile)
        }
        let members = own.map {
            CloudFleet.Member(licence: licences[$0], stateDirectory: cloudOptions.stateDirectory(uuid: licences[$0].uuid, profile: template.cloud))
        }
        MediaPreparation.enable()
        let began = ContinuousClock.now
        let devices = CloudFleetDevices(profiles: profiles, members: members, productKey: productKey, log: log, output: output)
        let fleet = CloudFleet(configuration: .init(
            members: members, softwareVersion: cloudOptions.softwareVersion, iotdns: server, iotdnsCA: iotdnsCA,
            skill: template.skill.jsonString, activationsPerSecond: perSecond
        ), paced: { index, purpose, letThrough in
            guard members.indices.contains(index) else { return }
            output.cloudPaced(uuid: members[index].licence.uuid, request: purpose.rawValue,
                              seconds: FleetOutput.seconds(letThrough - began), log: log)
        }) { index, event in
            await devices.handle(event, of: index)
        }
        output.cloudNote(String(format: "cloud %@: %d licences of product %@, joins paced at %g per second, iotdns %@:%d",
                                kind.rawValue, positions.count, productKey, cloudOptions.activationsPerSecond, server.host, server.port))
        var supervisor: CloudFleetSupervisor?
        if supervised {
            output.cloudNote("\(positions.count) licences need \(blocks.count) processes (this one and \(blocks.count - 1) workers, at most \(blocks.map(\.count).max() ?? 0) devices each), \(String(format: "%g", perSecond)) join requests per second each")
            let workers = CloudFleetSupervisor(blocks: Array(blocks.dropFirst()), output: output, log: log)
            try workers.start { self.cloudWorkerArguments($0, perSecond: perSecond) }
            supervisor = workers
        }
        let progress = Task { [supervisor] in
            var last: CloudFleetCounts?
            var allJoined = false
            while !Task.isCancelled {
                var counts = await fleet.counts() + (supervisor?.counts ?? CloudFleetCounts())
                // Workers that have not reported yet: joining.
                counts.joining += max(0, positions.count - counts.total)
                counts.total = max(counts.total, positions.count)
                let elapsed = ContinuousClock.now - began
                if counts != last { output.cloudProgress(counts, elapsed: elapsed) }
                last = counts
                if counts.joined == counts.total, counts.total > 0, !allJoined {
                    allJoined = true
                    output.cloudOnline(counts, elapsed: elapsed, perSecond: cloudOptions.activationsPerSecond)
                }
                // At most five lines a second, however large the fleet.
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        await fleet.start()
        let signal = await waitForTerminationSignal(exitDeadline: seconds(shutdownDeadline))
        output.cloudNote("shutting down (\(signalName(signal))): publishing offline, closing the cloud links")
        let stopping = ContinuousClock.now
        progress.cancel()
        supervisor?.terminate()
        var counts = await fleet.counts()
        var stopped = await devices.stop()
        await fleet.stop()
        var admitted = await fleet.pacer.admitted
        if let supervisor {
            let workers = await supervisor.waitForExit()
            counts = counts + workers.counts
            stopped += workers.stopped
            admitted += workers.pacedRequests
        }
        output.cloudSummary(counts, admitted: admitted)
        output.cloudStopped(devices: stopped, took: ContinuousClock.now - stopping)
    }

    /// The licence rows this process holds: its --shard block of the file's rows, or the block its
    /// supervisor gave it (--block LO:HI, rows of the whole file).
    func licenceRows(of total: Int) throws -> Range<Int> {
        do {
            var rows = try (shard.map(FleetShard.parse) ?? .whole).block(of: total)
            if let block {
                let parts = block.split(separator: ":")
                guard parts.count == 2, let lo = Int(parts[0]), let hi = Int(parts[1]), lo >= 0, lo <= hi, hi <= total else {
                    throw ValidationError("--block must be LO:HI within 0:\(total), got '\(block)'")
                }
                rows = lo..<hi
            }
            return rows
        } catch let error as FleetError {
            throw ValidationError(error.description)
        }
    }

    /// A worker's command line: the same fleet, its block of rows, its share of the join rate.
    func cloudWorkerArguments(_ block: Range<Int>, perSecond: Double) -> [String] {
        var args = ["fleet"] + profiles.flatMap { ["--profile", $0] }
        args += ["--cloud", cloudOptions.cloud?.rawValue ?? "tuya", "--licences", cloudOptions.licences ?? "",
                 "--block", "\(block.lowerBound):\(block.upperBound)", "--start", String(start),
                 "--activations-per-second", String(perSecond), "--software-version", cloudOptions.softwareVersion,
                 "--json", "--log-format", logFormat.rawValue, "--log-level", logLevel.rawValue,
                 "--shutdown-deadline", String(shutdownDeadline)]
        if let productKey = cloudOptions.productKey { args += ["--product-key", productKey] }
        if let stateDir = cloudOptions.stateDir { args += ["--state-dir", stateDir] }
        if let iotdns = cloudOptions.iotdns { args += ["--iotdns", "\(iotdns.host):\(iotdns.port)"] }
        if let ca = cloudOptions.cloudCa { args += ["--cloud-ca", ca] }
        if let answer { args += ["--answer", answer.text] }
        return args
    }

    private func instance(_ template: DeviceProfile, index: Int) throws -> DeviceProfile {
        do { return try template.instance(index: index) } catch { throw ValidationError("--profile: \(error)") }
    }
}
