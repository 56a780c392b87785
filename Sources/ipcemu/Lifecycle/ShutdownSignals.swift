import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs a command's services as one swift-service-lifecycle `ServiceGroup`: they start in the
/// order given and, on SIGTERM or SIGINT, shut down gracefully one at a time in the reverse order
/// (`ipcemu run`: the device ends its calls and goes offline, then the journal is finished, then
/// the HTTP server, then the private broker). The first signal also arms `deadline`, after which
/// the process exits anyway (status 1); a second signal exits at once (128 + the signal).
struct ServiceRunner {
    var services: [ServiceGroupConfiguration.ServiceConfiguration]
    var deadline: Duration
    /// Told which signal started the shutdown ("SIGTERM" or "SIGINT").
    var onSignal: @Sendable (String) -> Void

    func run() async throws {
        var logger = Logger(label: "ipcemu.lifecycle")
        logger.logLevel = .critical   // the commands log the steps themselves
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        // Past the deadline the services' tasks are cancelled; a moment later the process exits.
        configuration.maximumGracefulShutdownDuration = deadline
        let group = ServiceGroup(configuration: configuration)
        let watcher = await ShutdownSignals.watch(group: group, deadline: deadline, onSignal: onSignal)
        defer { watcher.cancel() }
        try await group.run()
    }
}

/// SIGTERM and SIGINT through swift-service-lifecycle's `UnixSignalsSequence`.
enum ShutdownSignals {
    /// Traps the signals now (before the group runs, so none is missed) and handles them on a task.
    static func watch(group: ServiceGroup, deadline: Duration,
                      onSignal: @escaping @Sendable (String) -> Void) async -> Task<Void, Never> {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        return Task {
            var seen = 0
            for await signal in signals {
                seen += 1
                let name = signal == .sigterm ? "SIGTERM" : "SIGINT"
                if seen == 1 {
                    onSignal(name)
                    armDeadline(deadline)
                    await group.triggerGracefulShutdown()
                } else {
                    Logger(label: "ipcemu.lifecycle").error("ipcemu: second \(name) during shutdown: exiting now")
                    _exit(128 + signal.rawValue)
                }
            }
        }
    }

    /// Exits the process once `deadline` has passed, whatever is still running: a timer on its
    /// own dispatch queue, so a stuck Swift concurrency pool cannot hold it back.
    static func armDeadline(_ deadline: Duration) {
        // The group cancels what is still running at the deadline; this is the backstop after it.
        let grace = deadline + .milliseconds(500)
        let nanoseconds = grace.components.seconds * 1_000_000_000 + grace.components.attoseconds / 1_000_000_000
        DispatchQueue(label: "ipcemu.shutdown-deadline").asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
            Logger(label: "ipcemu.lifecycle").error("ipcemu: shutdown did not finish within \(deadline): exiting anyway")
            _exit(1)
        }
    }
}
