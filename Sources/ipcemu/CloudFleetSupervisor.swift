import CallRuntime
import CloudLink
import Foundation
import Synchronization

/// The worker processes of a cloud fleet too big for one process (`ipcemu fleet --cloud tuya`):
/// one `ipcemu fleet --cloud tuya --block LO:HI --json` per block of licence rows after the first
/// (the supervisor holds the first itself, as `FleetSupervisor` does). It reads each worker's
/// `CloudFleetLine`s: their counts are added to the fleet's progress, their pairing URLs, paced
/// requests and refusals are passed on as the supervisor's own lines, and at shutdown their
/// summaries are added up.
final class CloudFleetSupervisor: Sendable {
    /// What the workers said at the end.
    struct Totals: Sendable {
        var counts = CloudFleetCounts()
        var stopped = 0
        var pacedRequests = 0
    }

    private struct WorkerState {
        var counts: CloudFleetCounts?
        var summary: (counts: CloudFleetCounts, paced: Int)?
        var stopped: Int?
        var buffer = Data()
        var endOfOutput = false
        var unreadableLines = 0
    }

    private struct State {
        var workers: [WorkerState]
        var stopping = false
    }

    let blocks: [Range<Int>]
    private let output: FleetOutput
    private let log: EventLog
    /// One worker process per block (Foundation's `Process` is Sendable).
    private let processes: [Process]
    private let state: Mutex<State>

    init(blocks: [Range<Int>], output: FleetOutput, log: EventLog) {
        self.blocks = blocks
        self.output = output
        self.log = log
        processes = blocks.map { _ in Process() }
        state = Mutex(State(workers: Array(repeating: WorkerState(), count: blocks.count)))
    }

    /// Starts a worker per block with `arguments(block)`; a worker that cannot start stops the
    /// ones already started.
    func start(arguments: (Range<Int>) -> [String]) throws {
        for (index, block) in blocks.enumerated() {
            let process = processes[index]
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            process.arguments = arguments(block)
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.standardError
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil }
                self?.received(data, from: index)
            }
            process.terminationHandler = { [weak self] process in
                guard let self, !self.state.withLock({ $0.stopping }) else { return }
                self.output.cloudNote("worker for licence rows \(block) exited with status \(process.terminationStatus) before the fleet stopped")
            }
            do {
                try process.run()
            } catch {
                terminate()
                throw error
            }
        }
    }

    /// The workers' latest counts, added up (those that have not reported count for nothing).
    var counts: CloudFleetCounts {
        state.withLock { $0.workers.reduce(CloudFleetCounts()) { $0 + ($1.counts ?? CloudFleetCounts()) } }
    }

    /// SIGTERM to every worker still running (each publishes its devices' offline status).
    func terminate() {
        state.withLock { $0.stopping = true }
        for worker in processes where worker.isRunning {
            kill(worker.processIdentifier, SIGTERM)
        }
    }

    /// Waits until every worker has exited and its output is read (SIGKILL after 10 s), and adds
    /// up what they said at the end.
    func waitForExit() async -> Totals {
        let deadline = ContinuousClock.now + .seconds(10)
        func done() -> Bool {
            state.withLock { s in zip(processes, s.workers).allSatisfy { !$0.isRunning && $1.endOfOutput } }
        }
        while !done(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        for worker in processes where worker.isRunning {
            output.cloudNote("worker \(worker.processIdentifier) did not exit in 10 s: killing it")
            kill(worker.processIdentifier, SIGKILL)
        }
        return state.withLock { s in
            var totals = Totals()
            for (index, worker) in s.workers.enumerated() {
                if let summary = worker.summary {
                    totals.counts = totals.counts + summary.counts
                    totals.pacedRequests += summary.paced
                } else if let counts = worker.counts {
                    totals.counts = totals.counts + counts
                } else {
                    var missing = CloudFleetCounts()
                    missing.total = blocks[index].count
                    missing.joining = blocks[index].count
                    totals.counts = totals.counts + missing
                }
                totals.stopped += worker.stopped ?? 0
            }
            return totals
        }
    }

    /// A worker's output, one `CloudFleetLine` per line. A line that is not one is logged with
    /// what was wrong with it and counted.
    private func received(_ data: Data, from index: Int) {
        var passOn: [CloudFleetLine] = []
        var unreadable: [(CloudFleetLineError, String)] = []
        state.withLock { s in
            guard s.workers.indices.contains(index) else { return }
            if data.isEmpty { s.workers[index].endOfOutput = true }
            s.workers[index].buffer.append(data)
            while let newline = s.workers[index].buffer.firstIndex(of: 0x0A) {
                let bytes = s.workers[index].buffer[s.workers[index].buffer.startIndex..<newline]
                s.workers[index].buffer.removeSubrange(s.workers[index].buffer.startIndex...newline)
                let line: CloudFleetLine
                do throws(CloudFleetLineError) {
                    line = try CloudFleetLine(jsonLine: bytes)
                } catch {
                    s.workers[index].unreadableLines += 1
                    unreadable.append((error, String(decoding: bytes.prefix(200), as: UTF8.self)))
                    continue
                }
                switch line {
                case .cloud(let counts, _): s.workers[index].counts = counts
                case .summary(let counts, let paced): s.workers[index].summary = (counts, paced)
                case .stopped(let devices, _): s.workers[index].stopped = devices
                case .online: break   // the supervisor says when the whole fleet is online
                case .pairing, .paced, .refused, .note: passOn.append(line)
                }
            }
        }
        let block = blocks.indices.contains(index) ? "\(blocks[index])" : "?"
        for (error, text) in unreadable {
            log.log(.warning, "fleet: unreadable line from a cloud worker: \(error)", fields: [("worker", block), ("line", text)])
        }
        for line in passOn {
            switch line {
            case .pairing(let uuid, let url): output.cloudPairing(uuid: uuid, url: url)
            case .paced(let uuid, let request, let seconds): output.cloudPaced(uuid: uuid, request: request, seconds: seconds, log: log)
            case .refused(let uuid, let reason): output.cloudRefused(uuid: uuid, why: reason)
            case .note(let message):
                if !message.hasPrefix("shutting down"), !message.hasPrefix("cloud ") {
                    output.cloudNote("worker \(block): \(message)")
                }
            default: break
            }
        }
    }
}
