import ArgumentParser
import CallRuntime
import DeviceProfile
import Emulator
import Foundation
import MQTTTransport
import ServiceLifecycle

/// `ipcemu fleet`: many virtual devices from one command (docs/fleet.md).
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Run many emulated devices from template profiles, in one or more processes.",
        discussion: """
            Each --profile FILE[:COUNT] is a template ({index} or {index:N} in its devId); device \
            number p of the fleet gets index --start + p. --shard i/N keeps block i of N of the \
            devices, so N processes (on N hosts) started with the same arguments hold disjoint \
            devices whose union is the whole fleet. Start-up is paced and printed; then one line \
            says how many are online, in how long, and the memory per device. When the devices need \
            more descriptors than one process may hold, worker processes are started under this one \
            (same block arithmetic). SIGTERM or SIGINT ends every call (PROTOCOL.md 3.3), publishes \
            every retained offline status, finishes the journal, stops the control API and the private \
            broker, and exits 0 (past --shutdown-deadline it exits anyway; a second signal at once). \
            See docs/fleet.md.
            """
    )

    @Option(name: .customLong("profile"), help: ArgumentHelp(
        "Template profile and how many devices of it (repeat for a mixed fleet; COUNT may be left to --count).",
        valueName: "FILE[:COUNT]"))
    var profiles: [String] = []

    @Option(help: "Devices in the whole fleet (every shard together); shared by the profiles without a COUNT.")
    var count: Int?

    @Option(help: "Index of the first device ({index} of position 0).")
    var start: Int = 0

    @Option(help: ArgumentHelp("Hold only block i of N (0-based, e.g. a Kubernetes completion index).", valueName: "i/N"))
    var shard: String?

    @Option(help: ArgumentHelp(
        "Broker URL, mqtt://host:port, mqtts://host:port or unix:///path/to.sock; repeat it or give mqtt://host:PORT1,PORT2,... for several brokers, each device on the one its devId hashes to (docs/fleet.md). Default: private mosquitto processes sized for the fleet.",
        valueName: "URL"))
    var broker: [String] = []

    @Option(help: ArgumentHelp(
        "Private mosquitto processes to start without --broker (default: as many as the descriptor limit needs, one per about that many devices).",
        valueName: "K"))
    var privateBrokers: Int?

    @Option(help: ArgumentHelp(
        "How devices reach the private brokers: unix (Unix domain sockets in each broker's private directory, a group per fleet process; the default, TCP with --source-ip) or tcp (loopback ports). Apps connect over TCP either way.",
        valueName: "tcp|unix"))
    var privateBrokerTransport: PrivateBrokerTransport?

    @Option(help: "Devices started per second (default: as fast as the broker brings them online, 500 at a time).")
    var connectRate: Double?

    @Option(help: "Devices connecting (not yet online) at once towards each broker, over all processes; keep it below the broker's listen backlog (mosquitto: 100).")
    var connectWindow: Int = Fleet.defaultWindow

    @Option(help: "MQTT event-loop threads per process.")
    var threads: Int = 2

    @Option(help: "Answer policy of every device (default: each profile's); auto is answer, :SECONDS answers or rejects after SECONDS.")
    var answer: AnswerPolicyOption?

    @Option(name: .customLong("source-ip"), help: ArgumentHelp(
        "Local addresses to spread the connections over, round robin (one address runs out of ports near 28,000 connections to one broker).",
        valueName: "A,B,..."))
    var sourceIP: String?

    @Option(help: "CA file for mqtts (default: the profile's broker.caFile, else the system CAs).")
    var caFile: String?

    @Flag(help: "Machine-readable output: one JSON object per line (progress, online, stopped).")
    var json = false

    @Option(help: "Most devices one process holds before workers are started (default: what the descriptor limit allows).")
    var maxDevicesPerProcess: Int?

    @Option(help: "Log format (json: one JSON object per line).")
    var logFormat: LogFormatOption = .human

    @Option(help: "Least severe level logged (a fleet logs warnings and worse by default).")
    var logLevel: LogLevelOption = .warning

    @OptionGroup(title: "Control API, console and journal") var controlOptions: ControlOptions

    @OptionGroup(title: "Tuya cloud (one device per licence; docs/tuya-cloud.md)") var cloudOptions: CloudFleetOptions

    @Flag(help: "Label /metrics per device (default: aggregated over the fleet).")
    var metricsPerDevice = false

    @Option(help: ArgumentHelp(
        "Seconds a shutdown (SIGTERM/SIGINT) may take before the process exits anyway (status 1); a second signal exits at once.",
        valueName: "SECONDS"))
    var shutdownDeadline: Double = 30

    @Option(help: ArgumentHelp(
        "Idle seconds before a low-power doorbell sleeps (PROTOCOL.md 8.4), for every low-power profile (default: each profile's power.sleepAfter).",
        valueName: "SECONDS"))
    var sleepAfter: Double?

    @Option(help: ArgumentHelp(
        "Seconds from a wake to DP 149 true, for every low-power profile (default: each profile's power.wakeLatency).",
        valueName: "SECONDS"))
    var wakeLatency: Double?

    /// Positions LO:HI of the plan (a worker's block, given by its supervisor).
    @Option(help: .hidden) var block: String?

    func validate() throws {
        guard !profiles.isEmpty else { throw ValidationError("give at least one --profile FILE[:COUNT]") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1 to 64, got \(threads)") }
        if let connectRate, !(connectRate > 0 && connectRate.isFinite) {
            throw ValidationError("--connect-rate must be a number of devices per second greater than 0")
        }
        guard (1...100_000).contains(connectWindow) else {
            throw ValidationError("--connect-window must be 1 to 100000, got \(connectWindow)")
        }
        if !broker.isEmpty {
            do { _ = try FleetBrokerList(arguments: broker) } catch { throw ValidationError(error.description) }
        }
        if privateBrokerTransport != nil, !broker.isEmpty {
            throw ValidationError("--private-broker-transport is for the private brokers: leave it out with --broker")
        }
        if let sourceIP {
            if privateBrokerTransport == .unix {
                throw ValidationError("--source-ip \(sourceIP) needs TCP: Unix sockets have no source address (use --private-broker-transport tcp)")
            }
            if let unix = broker.first(where: { $0.contains(MQTTBrokerEndpoint.unixScheme) }) {
                throw ValidationError("--source-ip \(sourceIP) needs TCP brokers: a Unix socket has no source address (--broker \(unix))")
            }
        }
        if let privateBrokers {
            guard broker.isEmpty else { throw ValidationError("--private-brokers is for the private brokers: leave it out with --broker") }
            guard (1...64).contains(privateBrokers) else {
                throw ValidationError("--private-brokers must be 1 to 64, got \(privateBrokers)")
            }
        }
        if let maxDevicesPerProcess, maxDevicesPerProcess < 1 {
            throw ValidationError("--max-devices-per-process must be at least 1")
        }
        guard shutdownDeadline > 0, shutdownDeadline <= 86_400 else {
            throw ValidationError("--shutdown-deadline must be a number of seconds greater than 0 and at most 86400")
        }
        if let sleepAfter, !(sleepAfter > 0 && sleepAfter <= DeviceProfile.Power.Limits.sleepAfter) {
            throw ValidationError("--sleep-after must be a number of seconds greater than 0 and at most 86400")
        }
        if let wakeLatency, !(wakeLatency >= 0 && wakeLatency <= DeviceProfile.Power.Limits.wakeLatency) {
            throw ValidationError("--wake-latency must be a number of seconds from 0 to 60")
        }
    }

    func run() async throws {
        if let cloud = cloudOptions.cloud { return try await runOnCloud(cloud) }
        let plan = try makePlan()
        let positions = try holdings(plan)
        let log = makeLog()
        let output = FleetOutput(json: json)

        // The descriptor budget first: the private broker inherits the raised limit.
        let budget = DescriptorBudget.raiseToHardLimit()
        let capacity = min(maxDevicesPerProcess ?? Int.max, max(1, budget.clientsThatFit))

        // Start-up: the broker, the journal file and the control address are had here, before
        // any device goes online; then one service group, shut down in the reverse order.
        // Several brokers travel as one comma-separated list of URLs (workers get it whole).
        // The devices' list (Unix sockets by default) and the one shown for apps (TCP, in the same
        // order: device i of either list reaches the same broker).
        // Over Unix sockets each process has sockets of its own on every private broker
        // (`PrivateBroker.deviceURLs(process:)`): the processes are counted first.
        let supervised = block == nil && positions.count > capacity
        let blocks = supervised ? FleetSupervisor.blocks(positions, capacity: capacity) : [positions]
        let embedded = try startPrivateBrokers(devices: positions.count, processes: blocks.count, budget: budget, output: output)
        let brokerURLs = blocks.indices.map { p in
            broker.isEmpty ? embedded.flatMap { $0.deviceURLs(process: p) }.joined(separator: ",") : broker.joined(separator: ",")
        }
        let brokerURL = brokerURLs[0]
        let shownURL = broker.isEmpty ? embedded.flatMap(\.urls).joined(separator: ",") : brokerURL
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        for b in embedded { services.append(.init(service: BrokerService(broker: b.broker))) }
        do {
            // The brokers' TCP accept backlogs are shared by every process: so is the window (the
            // workers get the same share, FleetSupervisor.workerArguments).
            let fleet = try makeFleet(plan: plan, positions: blocks[0], brokerURL: brokerURL, log: log,
                                      window: max(1, connectWindow / blocks.count))
            let control = try await controlOptions.attach(fleet: fleet, perDeviceMetrics: metricsPerDevice,
                                                          label: processLabel(blocks[0]))
            // Binds --control now: the fleet has made no device yet (they are registered once made).
            try await control?.serve(broker: fleet.options.connection, log: log, output: output)
            if let control {
                services.append(.init(service: ControlServerService(server: control.server, phone: nil)))
                services.append(.init(service: JournalService(registry: control.registry)))
            }
            if supervised {
                let supervisor = FleetSupervisor(command: self, positions: positions, blocks: blocks, brokerURLs: brokerURLs,
                                                 shownBrokerURL: shownURL, output: output, fleet: fleet, registry: control?.registry, log: log)
                services.append(.init(service: supervisor))
                FleetStormSignal.install(fleet: fleet, output: output) { supervisor.runningWorkerIDs }
                // A worker that exits on its own ends the whole fleet, gracefully.
                services.append(.init(service: WorkerExitService(supervisor: supervisor),
                                      successTerminationBehavior: .gracefullyShutdownGroup))
            } else {
                FleetStormSignal.install(fleet: fleet, output: output)
                services.append(.init(service: FleetService(fleet: fleet, registry: control?.registry, output: output,
                                                            brokerURL: shownURL, log: log)))
            }
        } catch {
            for b in embedded { b.broker.stop() }
            throw error
        }
        try await ServiceRunner(services: services, deadline: seconds(shutdownDeadline), onSignal: { signal in
            output.note("shutting down (\(signal)): ending calls, publishing offline")
        }).run()
    }

    func makeFleet(plan: FleetPlan, positions: Range<Int>, brokerURL: String, log: EventLog, window: Int? = nil) throws -> Fleet {
        let first = plan.groups.first?.profile
        let list: FleetBrokerList
        do { list = try FleetBrokerList(arguments: [brokerURL]) } catch { throw ValidationError(error.description) }
        var brokers: [MQTTClientOptions] = []
        for url in list.urls {
            var connection = try connectionOptions(brokerURL: url, clientID: "fleet",
                                                   caFile: caFile ?? first?.broker.caFile, certFile: nil, keyFile: nil)
            connection.keepAlive = first?.broker.keepAlive ?? 30
            brokers.append(connection)
        }
        guard let connection = brokers.first else { throw ValidationError("--broker: no broker given") }
        var options = Fleet.Options(
            connection: connection, threads: threads, connectRate: connectRate, window: window ?? connectWindow,
            answerPolicy: answer?.policy, sourceAddresses: sources, log: log,
            sleepAfter: sleepAfter, wakeLatency: wakeLatency)
        options.brokers = brokers.count > 1 ? brokers : []
        return try Fleet(plan: plan, positions: positions, options: options)
    }

    // MARK: Plan

    func makePlan() throws -> FleetPlan {
        var files: [String] = []
        var explicit: [Int?] = []
        for spec in profiles {
            // FILE:COUNT; a FILE may itself hold ':' (take the part after the last one if numeric).
            if let colon = spec.lastIndex(of: ":"), let n = Int(spec[spec.index(after: colon)...]) {
                guard n >= 0 else { throw ValidationError("--profile \(spec): COUNT must be 0 or more") }
                files.append(String(spec[..<colon]))
                explicit.append(n)
            } else {
                files.append(spec)
                explicit.append(nil)
            }
        }
        do {
            let counts = try FleetPlan.counts(explicit: explicit, total: count)
            var groups: [FleetPlan.Group] = []
            for (file, n) in zip(files, counts) {
                groups.append(FleetPlan.Group(profile: try loadProfile(file), count: n))
            }
            let plan = try FleetPlan(groups: groups, start: start)
            // Every devId must be valid and distinct: check the first and last of each group.
            var position = 0
            for group in plan.groups where group.count > 0 {
                _ = try plan.profile(at: position)
                _ = try plan.profile(at: position + group.count - 1)
                position += group.count
            }
            return plan
        } catch let error as FleetError {
            throw ValidationError(error.description)
        }
    }

    /// This process's positions: its --shard block, or the block its supervisor gave it.
    func holdings(_ plan: FleetPlan) throws -> Range<Int> {
        do {
            let shardBlock = try shard.map(FleetShard.parse) ?? .whole
            var positions = shardBlock.block(of: plan.total)
            if let block {
                let parts = block.split(separator: ":")
                guard parts.count == 2, let lo = Int(parts[0]), let hi = Int(parts[1]), lo >= 0, lo <= hi,
                      hi <= plan.total else {
                    throw ValidationError("--block must be LO:HI within 0:\(plan.total), got '\(block)'")
                }
                positions = lo..<hi
            }
            return positions
        } catch let error as FleetError {
            throw ValidationError(error.description)
        }
    }

    var sources: [String] {
        (sourceIP ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func processLabel(_ positions: Range<Int>) -> String {
        if let block { return "block-\(block.replacingOccurrences(of: ":", with: "-"))" }
        if let shard { return "shard-\(shard.replacingOccurrences(of: "/", with: "-of-"))" }
        return "fleet-\(positions.lowerBound)-\(positions.upperBound)"
    }
}
