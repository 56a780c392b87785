import ServiceLifecycle

/// Watches a supervised fleet's workers: one that exits on its own (crashed, killed) ends the
/// fleet. It returns then, and the group (configured with `.gracefullyShutdownGroup`) shuts every
/// other service down in order, as a SIGTERM would. On a shutdown from elsewhere it just returns.
struct WorkerExitService: Service, CustomStringConvertible {
    let supervisor: FleetSupervisor

    var description: String { "worker watch" }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !supervisor.aWorkerExited { try await Task.sleep(for: .milliseconds(50)) }
                supervisor.output.note("shutting down (a worker exited): ending calls, publishing offline in every process")
            }
        } catch {
            // Cancelled by the graceful shutdown: nothing to report.
        }
    }
}
