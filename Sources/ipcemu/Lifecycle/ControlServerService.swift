import ControlAPI
import ServiceLifecycle

/// The HTTP control API (and the console's phone) as a service. The server is bound before the
/// group runs (a taken port fails the start-up before any device is online); it stops after the
/// journal, so the API answers while the devices go offline.
struct ControlServerService: Service, CustomStringConvertible {
    let server: ControlServer?
    let phone: ConsolePhone?

    var description: String { "control API \(server?.url ?? "(none)")" }

    func run() async throws {
        try? await gracefulShutdown()
        await server?.stop()
        await phone?.stop()
    }
}
