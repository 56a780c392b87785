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

    func run() async throws {
        output.note("\(positions.count) devices need \(workerCount) worker processes (at most \(positions.count / workerCount + 1) each)")
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let began = ContinuousClock.now
        for w in 0..<workerCount {
            let block = FleetShard.block(w, of: workerCount, in: positions)
            let worker = Worker(block: block)
            try start(worker)
            lock.withLock { workers.append(worker) }
        }
        // Progress until every worker reported its start-up summary.
        while true {
            let (done, online, exited) = lock.withLock { () -> (Bool, Int, Bool) in
                (workers.allSatisfy { $0.online != nil },
                 workers.reduce(0) { $0 + (($1.online?["online"] as? Int) ?? $1.progressOnline) },
                 workers.contains { !$0.process.isRunning && $0.online == nil })
            }
            if done || exited { break }
            output.progress(FleetProgress(online: online, started: online, total: positions.count,
                                          elapsed: ContinuousClock.now - began))
            try? await Task.sleep(for: .seconds(1))
        }
        let summary = lock.withLock { () -> FleetStartReport in
            var r = FleetStartReport(planned: positions.count, started: 0, online: 0, elapsed: ContinuousClock.now - began,
                                     shortage: nil, failures: [])
            for w in workers {
                r.started += (w.online?["started"] as? Int) ?? 0
                r.online += (w.online?["online"] as? Int) ?? 0
                if let e = w.online?["error"] as? String { r.shortage = (r.shortage.map { $0 + "; " } ?? "") + e }
                if w.online == nil { r.failures.append("worker for devices \(w.block) exited with status \(w.process.terminationStatus) before it was online") }
            }
            return r
        }
        let rss = lock.withLock { workers.compactMap { ProcessMemory.residentBytes(pid: $0.process.processIdentifier) } }
            .reduce(ProcessMemory.residentBytes() ?? 0, +)
        output.online(summary, rssBytes: rss, rssBeforeBytes: 0, processes: workerCount + 1, brokerURL: brokerURL)

        let sig = await waitForTerminationSignalOrWorkerExit()
        output.note("shutting down (\(sig)): ending calls, publishing offline in every worker")
        let stopBegan = ContinuousClock.now
        for w in lock.withLock({ workers }) where w.process.isRunning {
            kill(w.process.processIdentifier, SIGTERM)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while lock.withLock({ workers.contains { $0.process.isRunning } }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
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
                    if let m = object["message"] as? String, !m.hasPrefix("shutting down") { output.note("worker \(worker.block): \(m)") }
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
        return args
    }

    /// SIGTERM/SIGINT, or a worker that died on its own (then the fleet ends too).
    private func waitForTerminationSignalOrWorkerExit() async -> String {
        let watch = SignalWatch()
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
