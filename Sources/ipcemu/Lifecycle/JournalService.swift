import ControlAPI
import ServiceLifecycle

/// The call journal (and what else the registry of devices feeds: metrics, the event stream) as a
/// service. It shuts down after the devices: it waits for the last events of the calls the
/// shutdown ended to be written, then closes the files.
struct JournalService: Service, CustomStringConvertible {
    let registry: DeviceRegistry
    /// The longest it waits for those last lines.
    var drainTimeout: Duration = .seconds(2)

    var description: String { "journal" }

    func run() async throws {
        try? await gracefulShutdown()
        await registry.finish(timeout: drainTimeout)
    }
}
