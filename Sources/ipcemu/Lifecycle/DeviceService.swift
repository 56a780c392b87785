import Emulator
import ServiceLifecycle

/// One device as a service: it connects when the group runs (everything that can fail at start-up
/// was checked before) and, on graceful shutdown, ends its calls (PROTOCOL.md 3.3: `hang_up`,
/// `reject` or `cancel`, reason `shutdown`) and publishes its retained offline status.
struct DeviceService: Service, CustomStringConvertible {
    let device: Device
    /// How long the offline status may wait for the broker's acknowledgement.
    var stopTimeout: Duration = .milliseconds(800)
    /// Called once the device is online, or has waited `onlineWait` for the broker (false).
    var onlineWait: Duration = .seconds(3)
    var online: @Sendable (Bool) async -> Void = { _ in }

    var description: String { "device \(device.devId)" }

    func run() async throws {
        do {
            try await device.start()
        } catch {
            await device.stop(timeout: stopTimeout)
            throw error
        }
        let connected = await device.waitUntilConnected(timeout: onlineWait)
        await online(connected)
        try? await gracefulShutdown()
        await device.stop(timeout: stopTimeout)
    }
}
