import ArgumentParser
import CallRuntime
import ControlAPI
import Emulator
import Foundation
import ServiceLifecycle
import Synchronization

/// Runs a fleet bigger than one process may hold as worker processes (`ipcemu fleet --block
/// LO:HI`, the same block arithmetic as --shard) and is, to the user, the one fleet: it prints the
/// combined progress and summary. A service of the fleet's group: on graceful shutdown (SIGTERM,
/// SIGINT, or a worker that exited on its own) SIGTERM reaches every worker while this process's
/// own devices go offline, and it returns when all workers have exited (killed after 10 s).
final class FleetSupervisor: Service, CustomStringConvertible, Sendable {
    let command: FleetCommand
    let positions: Range<Int>
    /// The first block is held here, by `fleet`; a worker holds each other one.
    let blocks: [Range<Int>]
    /// The devices' broker list of each block's process, in the order of `blocks` (the same list
    /// for every process over TCP; over Unix sockets each process's own sockets).
    let brokerURLs: [String]
    /// The broker list the online line shows (the private brokers' TCP listeners, for apps).
    let shownBrokerURL: String
    let output: FleetOutput
    let fleet: Fleet
    let registry: DeviceRegistry?
    let log: EventLog
    /// The workers started so far.
    private let started = Mutex<[Worker]>([])

    /// One worker process and what it has said.
    final class Worker: Sendable {
        let block: Range<Int>
        /// The block's index in `blocks` (1 for the first worker: 0 is this process's own).
        let index: Int
        let process = Process()
        let heard = Mutex(Heard())

        init(block: Range<Int>, index: Int) {
            self.block = block
            self.index = index
        }
    }

    /// What a worker has said on its standard output (one `FleetLine` per line).
    struct Heard {
        /// The worker's start-up summary, once it printed it.
        var online: FleetOnlineLine?
        var progressOnline = 0
        var stopped: FleetStoppedLine?
        /// The worker's last `power` line (PROTOCOL.md 8.4 counts).
        var power = FleetPowerCounts()
        /// Lines that were not fleet lines (each logged with what was wrong).
        var unreadableLines = 0
        /// A line not finished yet.
        var buffer = Data()
    }

    private var workers: [Worker] { started.withLock { $0 } }

    /// The process ids of the workers running now (SIGUSR1 is passed on to them: FleetStormSignal).
    var runningWorkerIDs: [pid_t] { workers.filter { $0.process.isRunning }.map { $0.process.processIdentifier } }

    init(command: FleetCommand, positions: Range<Int>, blocks: [Range<Int>], brokerURLs: [String],
         shownBrokerURL: String, output: FleetOutput,
         fleet: Fleet, registry: DeviceRegistry?, log: EventLog) {
        self.command = command
        self.positions = positions
        self.blocks = blocks
        self.brokerURLs = brokerURLs
        self.shownBrokerURL = shownBrokerURL
        self.output = output
        self.fleet = fleet
        self.registry = registry
        self.log = log
    }

    /// `positions` cut into the fewest blocks of at most `capacity` devices.
    static func blocks(_ positions: Range<Int>, capacity: Int) -> [Range<Int>] {
        let count = max(1, (positions.count + capacity - 1) / max(1, capacity))
        return (0..<count).map { FleetShard.block($0, of: count, in: positions) }
    }

    var workerCount: Int { blocks.count }

    var description: String { "fleet supervisor (\(workerCount - 1) workers)" }

    /// True once a worker has exited (on its own, before the shutdown).
    var aWorkerExited: Bool { workers.contains { !$0.process.isRunning } }

    /// Holds the first block itself (one process fewer: the runtime and libraries are paid once
    /// less) and starts a worker for every other block.
    func run() async throws {
        output.note("\(positions.count) devices need \(workerCount) processes (this one and \(workerCount - 1) workers, at most \(blocks.map(\.count).max() ?? 0) devices each)")
        let began = ContinuousClock.now
        for (index, block) in blocks.enumerated().dropFirst() {
            let worker = Worker(block: block, index: index)
            do { try start(worker) } catch {
                await stopWorkers()
                throw error
            }
            started.withLock { $0.append(worker) }
        }
        let localOnline = Counter()
        let printer = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let online = localOnline.value + workers.reduce(0) { sum, w in
                    sum + w.heard.withLock { $0.online?.online ?? $0.progressOnline }
                }
                output.progress(FleetProgress(online: online, started: online, total: positions.count,
                                              elapsed: ContinuousClock.now - began))
            }
        }
        let local = await fleet.start { localOnline.set($0.online) }
        localOnline.set(local.online)
        // Then until every worker reported its start-up summary (or died).
        while !workers.allSatisfy({ w in w.heard.withLock { $0.online != nil } || !w.process.isRunning }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        printer.cancel()
        let summary = { () -> FleetStartReport in
            var r = local
            r.planned = positions.count
            r.elapsed = ContinuousClock.now - began
            for w in workers {
                guard let online = w.heard.withLock({ $0.online }) else {
                    r.failures.append("worker for devices \(w.block) exited with status \(w.process.terminationStatus) before it was online")
                    continue
                }
                r.started += online.started
                r.online += online.online
                if let e = online.error { r.shortage = (r.shortage.map { $0 + "; " } ?? "") + e }
                r.failures += online.failures ?? []
            }
            for w in workers {
                let unreadable = w.heard.withLock { $0.unreadableLines }
                if unreadable > 0 {
                    r.failures.append("worker for devices \(w.block) printed \(unreadable) lines that were not fleet lines (each logged with the field that was wrong)")
                }
            }
            return r
        }()
        let pids = workers.map { $0.process.processIdentifier }
        let rss = pids.compactMap { ProcessMemory.residentBytes(pid: $0) }.reduce(ProcessMemory.residentBytes() ?? 0, +)
        let pss = pids.compactMap { ProcessMemory.proportionalBytes(pid: $0) }.reduce(ProcessMemory.proportionalBytes() ?? 0, +)
        var power = await fleet.powerCounts()
        for w in workers {
            let p = w.heard.withLock { $0.power }
            power.lowPower += p.lowPower
            power.awake += p.awake
            power.asleep += p.asleep
            power.waking += p.waking
        }
        output.online(summary, rssBytes: rss, rssBeforeBytes: 0, pssBytes: pss, processes: workerCount, brokerURL: shownBrokerURL,
                      power: power)
        await register(fleet, in: registry, log: log)
        let powerLines = output.watchPower(fleet) { [self] in
            workers.reduce(into: FleetPowerCounts()) { sum, w in
                let p = w.heard.withLock { $0.power }
                sum.lowPower += p.lowPower
                sum.awake += p.awake
                sum.asleep += p.asleep
                sum.waking += p.waking
            }
        }

        try? await gracefulShutdown()
        powerLines.cancel()
        let stopBegan = ContinuousClock.now
        await stopWorkers()
        output.stopped(devices: summary.started, took: ContinuousClock.now - stopBegan)
    }

    /// SIGTERM to every worker while this process's devices go offline; then waits for the
    /// workers (each ends its calls and publishes offline) and kills any left after 10 s.
    private func stopWorkers() async {
        for w in workers where w.process.isRunning {
            kill(w.process.processIdentifier, SIGTERM)
        }
        await fleet.stop()
        let deadline = ContinuousClock.now + .seconds(10)
        while workers.contains(where: { $0.process.isRunning }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        for w in workers where w.process.isRunning {
            output.note("worker \(w.process.processIdentifier) did not exit in 10 s: killing it")
            kill(w.process.processIdentifier, SIGKILL)
        }
    }

    private func start(_ worker: Worker) throws {
        let p = worker.process
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        p.arguments = workerArguments(worker.block, brokerURL: brokerURLs.indices.contains(worker.index)
                                      ? brokerURLs[worker.index] : brokerURLs.first ?? "")
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.standardError
        out.fileHandleForReading.readabilityHandler = { [weak self, worker] handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            self?.received(data, from: worker)
        }
        try p.run()
    }

    /// A worker's output: one `FleetLine` per line. A line that is not one is logged with what
    /// was wrong with it (the field) and counted; nothing is read from it.
    private func received(_ data: Data, from worker: Worker) {
        var notes: [String] = []
        var unreadable: [(FleetLineError, String)] = []
        worker.heard.withLock { heard in
            heard.buffer.append(data)
            while let newline = heard.buffer.firstIndex(of: 0x0A) {
                let bytes = heard.buffer[heard.buffer.startIndex..<newline]
                heard.buffer.removeSubrange(heard.buffer.startIndex...newline)
                let line: FleetLine
                do throws(FleetLineError) {
                    line = try FleetLine(jsonLine: bytes)
                } catch {
                    heard.unreadableLines += 1
                    unreadable.append((error, String(decoding: bytes.prefix(200), as: UTF8.self)))
                    continue
                }
                switch line {
                case .progress(let p): heard.progressOnline = p.online
                case .online(let o):
                    heard.online = o
                    if let power = o.power { heard.power = power }
                case .stopped(let s): heard.stopped = s
                case .power(let p): heard.power = p
                case .note(let n):
                    if !n.message.hasPrefix("shutting down"), !n.message.hasPrefix("control API") {
                        notes.append(n.message)
                    }
                }
            }
        }
        for (error, text) in unreadable {
            log.log(.warning, "fleet: unreadable line from a worker: \(error)",
                    fields: [("worker", "\(worker.block)"), ("line", text)])
        }
        for message in notes { output.note("worker \(worker.block): \(message)") }
    }

    private func workerArguments(_ block: Range<Int>, brokerURL: String) -> [String] {
        let c = command
        var args = ["fleet"]
        for p in c.profiles { args += ["--profile", p] }
        if let count = c.count { args += ["--count", String(count)] }
        args += ["--start", String(c.start), "--block", "\(block.lowerBound):\(block.upperBound)",
                 "--broker", brokerURL, "--threads", String(c.threads), "--json",
                 "--log-format", c.logFormat.rawValue, "--log-level", c.logLevel.rawValue]
        if let shard = c.shard { args += ["--shard", shard] }
        if let rate = c.connectRate { args += ["--connect-rate", String(rate / Double(workerCount))] }
        // The broker's accept backlog is shared by every process: so is the window.
        args += ["--connect-window", String(max(1, c.connectWindow / max(1, workerCount)))]
        if let answer = c.answer { args += ["--answer", answer.text] }
        if let ip = c.sourceIP { args += ["--source-ip", ip] }
        if let ca = c.caFile { args += ["--ca-file", ca] }
        if let max = c.maxDevicesPerProcess { args += ["--max-devices-per-process", String(max)] }
        if let journal = c.controlOptions.journal { args += ["--journal", journal] }   // one file per process
        if c.metricsPerDevice { args += ["--metrics-per-device"] }
        if let s = c.sleepAfter { args += ["--sleep-after", String(s)] }
        if let l = c.wakeLatency { args += ["--wake-latency", String(l)] }
        args += ["--shutdown-deadline", String(c.shutdownDeadline)]
        return args
    }
}
