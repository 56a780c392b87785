import CallRuntime
import ControlAPI
import Emulator
import ServiceLifecycle

/// This process's devices of `ipcemu fleet` as a service: made and connected (paced, with progress
/// lines) when the group runs, registered with the control plane once made; on graceful shutdown
/// every call ends (PROTOCOL.md 3.3, reason `shutdown`) and every retained offline status is
/// published, all devices at once.
struct FleetService: Service, CustomStringConvertible {
    let fleet: Fleet
    /// The control plane's registry (--control or --journal), if any.
    let registry: DeviceRegistry?
    let output: FleetOutput
    let brokerURL: String
    let log: EventLog

    var description: String { "fleet \(fleet.positions)" }

    func run() async throws {
        let rssBefore = ProcessMemory.residentBytes() ?? 0
        let report = await fleet.start { progress in output.progress(progress) }
        let rss = ProcessMemory.residentBytes() ?? 0
        output.online(report, rssBytes: rss, rssBeforeBytes: rssBefore, pssBytes: ProcessMemory.proportionalBytes() ?? 0,
                      processes: 1, brokerURL: brokerURL, power: await fleet.powerCounts())
        await register(fleet, in: registry, log: log)
        let powerLines = output.watchPower(fleet)   // PROTOCOL.md 8.4: asleep/awake counts as they change
        try? await gracefulShutdown()
        powerLines.cancel()
        let took = await fleet.stop()
        output.stopped(devices: report.started, took: took)
    }
}

/// Every device of `fleet` in the control plane's registry (every per-device route, the journal).
func register(_ fleet: Fleet, in registry: DeviceRegistry?, log: EventLog) async {
    guard let registry else { return }
    for device in fleet.devices {
        do { try await registry.add(device) } catch { log.log(.error, "control: \(error.message)") }
    }
}
