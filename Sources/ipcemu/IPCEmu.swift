import ArgumentParser
import Foundation

/// The `ipcemu` command: one executable, one subcommand per job (DESIGN.md layers).
@main
struct IPCEmu: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ipcemu",
        abstract: "Emulates a Tuya-style video doorbell (IPC with screen) or control panel over MQTT and WebRTC.",
        version: version,
        subcommands: [
            RunCommand.self, FleetCommand.self, AppCommand.self, BenchCommand.self, ProfileCommand.self,
            CamerasCommand.self, SnapshotCommand.self,
            PressCommand.self, AnswerCommand.self, RejectCommand.self, CancelCommand.self, HangUpCommand.self,
            StatusCommand.self, FaultsCommand.self, FleetFaultsCommand.self, EventsCommand.self, ScenarioCommand.self,
            CloudCommand.self, SimulateCommand.self,
        ]
    )

    /// Runs the command, then ends the process with `_exit` after flushing stdout and stderr.
    /// A normal `exit` runs the C and C++ static destructors and atexit handlers while GStreamer's
    /// and libdispatch's threads may still be running (a streaming thread that outlived its
    /// pipeline, a worker parked in the pool): seen in CI as a SIGSEGV in `pthread_mutex_lock` on
    /// a destroyed lock right after a clean SIGTERM shutdown. Every service has finished by the time
    /// `run()` returns, so there is nothing left for the destructors to do.
    static func main() async {
        let status: Int32
        do {
            var command = try parseAsRoot()
            LoggingBootstrap.install(for: command)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            // What ArgumentParser's `exit(withError:)` prints: help and version on stdout, errors on stderr.
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == .success { print(message) } else { note(message) }
            }
            status = code.rawValue
        }
        fflush(nil)   // every C stream: print's buffered stdout above all
        _exit(status)
    }
}
