import ArgumentParser
import CallRuntime
import Logging

/// A command whose options say how log lines look (`--log-format`, `--log-level`).
protocol LogConfiguredCommand {
    var logFormatOption: LogFormatOption { get }
    var logLevelOption: LogLevelOption { get }
}

/// swift-log is the one logging system of the process: `main` bootstraps it once, before the
/// command runs, with the `EventLogHandler` in the command's format and level (human, info for
/// commands without log options). Every `Logger` the process makes, ours (`EventLog`) and the
/// libraries' (service lifecycle), writes through it.
enum LoggingBootstrap {
    static func install(for command: any ParsableCommand) {
        let configured = command as? any LogConfiguredCommand
        let format = configured?.logFormatOption.format ?? .human
        let level = configured?.logLevelOption.level ?? .info
        LoggingSystem.bootstrap { _ in EventLogHandler(format: format, level: level) }
    }
}

extension LogOptions {
    /// The process's log: the bootstrapped handler (format and level from these options).
    func makeLog() -> EventLog { EventLog(logger: Logger(label: "ipcemu")) }
}

extension RunCommand: LogConfiguredCommand {
    var logFormatOption: LogFormatOption { logOptions.logFormat }
    var logLevelOption: LogLevelOption { logOptions.logLevel }
}

extension FleetCommand: LogConfiguredCommand {
    var logFormatOption: LogFormatOption { logFormat }
    var logLevelOption: LogLevelOption { logLevel }

    func makeLog() -> EventLog { EventLog(logger: Logger(label: "ipcemu")) }
}
