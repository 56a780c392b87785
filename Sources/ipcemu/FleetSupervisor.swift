import ArgumentParser
import Emulator
import Foundation

/// Runs a fleet bigger than one process may hold as worker processes (`ipcemu fleet --block
/// LO:HI`, the same block arithmetic as --shard) and is, to the user, the one fleet: it prints the
/// combined progress and summary, and owns the signals (SIGTERM reaches every worker; it exits
/// when all have gone offline and exited).
final class FleetSupervisor: @unchecked Sendable {
    let command: FleetCommand
    let plan: FleetPlan
    let positions: Range<Int>
    let workerCount: Int
    let brokerURL: String
    let output: FleetOutput
    private let lock = NSLock()
    private var workers: [Worker] = []

    final class Worker: @unchecked Sendable {
        let block: Range<Int>
        let process = Process()
        var online: [String: Any]?
        var progressOnline = 0
        var stopped: [String: Any]?
        var buffer = Data()

        init(block: Range<Int>) { self.block = block }
    }

    init(command: FleetCommand, plan: FleetPlan, positions: Range<Int>, capacity: Int, brokerURL: String, output: FleetOutput) {
        self.command = command
        self.plan = plan
        self.positions = positions
        self.workerCount = (positions.count + capacity - 1) / max(1, capacity)
        self.brokerURL = brokerURL
        self.output = output
    }

    /// Holds the first block itself (one process fewer: the runtime and libraries are paid once
    /// less) and starts a worker for every other block.
    func run(local makeFleet: (Range<Int>) throws -> Fleet, attach: (Fleet) async throws -> RunningFleetControl?) async throws {
        let blocks = (0..<workerCount).map { FleetShard.block($0, of: workerCount, in: positions) }
        output.note("\(positions.count) devices need \(workerCount) processes (this one and \(workerCount - 1) workers, at most \(blocks.map(\.count).max() ?? 0) devices each)")
        let watch = SignalWatch()
        let began = ContinuousClock.now
        for block in blocks.dropFirst() {
            let worker = Worker(block: block)
            try start(worker)
            lock.withLock { workers.append(worker) }
        }
        let fleet = try makeFleet(blocks[0])
        let control = try await attach(fleet)
        let localOnline = Counter()
        let printer = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let online = localOnline.value + lock.withLock {
                    workers.reduce(0) { $0 + (($1.online?["online"] as? Int) ?? $1.progressOnline) }
                }
                output.progress(FleetProgress(online: online, started: online, total: positions.count,
                                              elapsed: ContinuousClock.now - began))
            }
        }
        let local = await fleet.start { localOnline.set($0.online) }
        localOnline.set(local.online)
        // Then until every worker reported its start-up summary (or died).
        while lock.withLock({ !workers.allSatisfy { $0.online != nil || !$0.process.isRunning } }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        printer.cancel()
        let summary = lock.withLock { () -> FleetStartReport in
            var r = local
            r.planned = positions.count
            r.elapsed = ContinuousClock.now - began
            for w in workers {
                r.started += (w.online?["started"] as? Int) ?? 0
                r.online += (w.online?["online"] as? Int) ?? 0
                if let e = w.online?["error"] as? String { r.shortage = (r.shortage.map { $0 + "; " } ?? "") + e }
                if w.online == nil { r.failures.append("worker for devices \(w.block) exited with status \(w.process.terminationStatus) before it was online") }
            }
            return r
        }
        let pids = lock.withLock { workers.map { $0.process.processIdentifier } }
        let rss = pids.compactMap { ProcessMemory.residentBytes(pid: $0) }.reduce(ProcessMemory.residentBytes() ?? 0, +)
        let pss = pids.compactMap { ProcessMemory.proportionalBytes(pid: $0) }.reduce(ProcessMemory.proportionalBytes() ?? 0, +)
        output.online(summary, rssBytes: rss, rssBeforeBytes: 0, pssBytes: pss, processes: workerCount, brokerURL: brokerURL)
        if let control { try await control.serve(broker: fleet.options.connection, log: fleet.options.log, output: output) }

        let sig = await waitForTerminationSignalOrWorkerExit(watch)
        output.note("shutting down (\(sig)): ending calls, publishing offline in every process")
        let stopBegan = ContinuousClock.now
        for w in lock.withLock({ workers }) where w.process.isRunning {
            kill(w.process.processIdentifier, SIGTERM)
        }
        await fleet.stop()
        await control?.stop()
        let deadline = ContinuousClock.now + .seconds(10)
        while lock.withLock({ workers.contains { $0.process.isRunning } }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        for w in lock.withLock({ workers }) where w.process.isRunning {
            output.note("worker \(w.process.processIdentifier) did not exit in 10 s: killing it")
            kill(w.process.processIdentifier, SIGKILL)
        }
        output.stopped(devices: summary.started, took: ContinuousClock.now - stopBegan)
    }

    private func start(_ worker: Worker) throws {
        let p = worker.process
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        p.arguments = workerArguments(worker.block)
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

    private func received(_ data: Data, from worker: Worker) {
        lock.withLock {
            worker.buffer.append(data)
            while let newline = worker.buffer.firstIndex(of: 0x0A) {
                let line = worker.buffer[worker.buffer.startIndex..<newline]
                worker.buffer.removeSubrange(worker.buffer.startIndex...newline)
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      let event = object["event"] as? String else { continue }
                switch event {
                case "progress": worker.progressOnline = (object["online"] as? Int) ?? worker.progressOnline
                case "online": worker.online = object
                case "stopped": worker.stopped = object
                case "note":
                    if let m = object["message"] as? String, !m.hasPrefix("shutting down"), !m.hasPrefix("control API") {
                        output.note("worker \(worker.block): \(m)")
                    }
                default: break
                }
            }
        }
    }

    private func workerArguments(_ block: Range<Int>) -> [String] {
        let c = command
        var args = ["fleet"]
        for p in c.profiles { args += ["--profile", p] }
        if let count = c.count { args += ["--count", String(count)] }
        args += ["--start", String(c.start), "--block", "\(block.lowerBound):\(block.upperBound)",
                 "--broker", brokerURL, "--threads", String(c.threads), "--json",
                 "--log-format", c.logFormat, "--log-level", c.logLevel]
        if let shard = c.shard { args += ["--shard", shard] }
        if let rate = c.connectRate { args += ["--connect-rate", String(rate / Double(workerCount))] }
        if let answer = c.answer { args += ["--answer", answer] }
        if let ip = c.sourceIP { args += ["--source-ip", ip] }
        if let ca = c.caFile { args += ["--ca-file", ca] }
        if let max = c.maxDevicesPerProcess { args += ["--max-devices-per-process", String(max)] }
        if let journal = c.controlOptions.journal { args += ["--journal", journal] }   // one file per process
        if c.metricsPerDevice { args += ["--metrics-per-device"] }
        return args
    }

    /// SIGTERM/SIGINT, or a worker that died on its own (then the fleet ends too).
    private func waitForTerminationSignalOrWorkerExit(_ watch: SignalWatch) async -> String {
        while true {
            if let sig = watch.received { return sig == SIGTERM ? "SIGTERM" : "SIGINT" }
            if lock.withLock({ workers.contains { !$0.process.isRunning } }) { return "a worker exited" }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// Remembers the first SIGTERM or SIGINT (for loops that also watch something else).
final class SignalWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var first: Int32?
    private var sources: [any DispatchSourceSignal] = []

    init() {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "ipcemu.signal-watch")
        for sig in [SIGTERM, SIGINT] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.lock.withLock { if self.first == nil { self.first = sig } }
            }
            source.resume()
            sources.append(source)
        }
    }

    var received: Int32? { lock.withLock { first } }
}
