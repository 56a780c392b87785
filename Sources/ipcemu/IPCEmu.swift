import ArgumentParser

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
        ]
    )
}
